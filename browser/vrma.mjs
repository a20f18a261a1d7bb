// Play a VRM Animation (.vrma) on a VRM avatar with three-vrm's own loaders
// (@pixiv/three-vrm VRMLoaderPlugin, @pixiv/three-vrm-animation VRMAnimationLoaderPlugin and
// createVRMAnimationClip) and three.js's AnimationMixer in headless Chromium, and print the world
// position of every humanoid bone of the avatar at the given times.
//
//   node vrma.mjs --file AVATAR.vrm --vrma CLIP.vrma --times t0,t1,...
//
// Prints {"bones": {humanoidBoneName: [[x,y,z] per time]}, "meta": "0" | "1"} on stdout: the raw
// (file) bones after three-vrm copies its normalized pose onto them, in the file's world (the
// scene is not turned: VRMUtils.rotateVRM0 is not called). Exits non-zero when the page fails.

import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
for (const k of ['file', 'vrma', 'times']) {
  if (!args[k]) {
    console.error(`vrma.mjs: --${k} is required`);
    process.exit(2);
  }
}
const file = path.resolve(args.file);
const vrma = path.resolve(args.vrma);
const times = args.times.split(',').map(Number);
const types = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.html': 'text/html', '.wasm': 'application/wasm' };

const page = `<!doctype html><html><head>
<script type="importmap">{"imports":{
  "three":"/node_modules/three/build/three.module.js",
  "three/addons/":"/node_modules/three/examples/jsm/",
  "@pixiv/three-vrm":"/node_modules/@pixiv/three-vrm/lib/three-vrm.module.js",
  "@pixiv/three-vrm-animation":"/node_modules/@pixiv/three-vrm-animation/lib/three-vrm-animation.module.js"}}</script></head>
<body><script type="module">
import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { VRMLoaderPlugin } from '@pixiv/three-vrm';
import { VRMAnimationLoaderPlugin, createVRMAnimationClip } from '@pixiv/three-vrm-animation';
try {
  const loader = new GLTFLoader();
  loader.register((p) => new VRMLoaderPlugin(p));
  loader.register((p) => new VRMAnimationLoaderPlugin(p));
  const avatar = await loader.loadAsync('/file/a/${encodeURIComponent(path.basename(file))}');
  const vrm = avatar.userData.vrm;
  if (!vrm) throw new Error('not a VRM avatar');
  const anim = await loader.loadAsync('/file/b/${encodeURIComponent(path.basename(vrma))}');
  const vrmAnimation = anim.userData.vrmAnimations && anim.userData.vrmAnimations[0];
  if (!vrmAnimation) throw new Error('not a VRM Animation');
  const clip = createVRMAnimationClip(vrmAnimation, vrm);
  const mixer = new THREE.AnimationMixer(vrm.scene);
  mixer.clipAction(clip).play();
  const names = Object.keys(vrm.humanoid.humanBones);
  const out = { bones: {}, meta: vrm.meta.metaVersion };
  const v = new THREE.Vector3();
  for (const t of ${JSON.stringify(times)}) {
    mixer.setTime(t);
    vrm.humanoid.update();
    vrm.scene.updateMatrixWorld(true);
    for (const n of names) {
      const node = vrm.humanoid.getRawBoneNode(n);
      if (node) (out.bones[n] ??= []).push(node.getWorldPosition(v).toArray());
    }
  }
  window.result = JSON.stringify(out);
  window.done = true;
} catch (e) {
  window.failed = String(e && e.stack || e);
}
</script></body></html>`;


const server = http.createServer((req, res) => {
  const url = decodeURIComponent(req.url.split('?')[0]);
  let p = null;
  if (url === '/' || url === '/index.html') {
    res.writeHead(200, { 'content-type': 'text/html' });
    return res.end(page);
  } else if (url.startsWith('/node_modules/')) {
    p = path.join(here, url);
  } else if (url === `/file/a/${path.basename(file)}`) {
    p = file;
  } else if (url === `/file/b/${path.basename(vrma)}`) {
    p = vrma;
  }
  if (!p || !p.startsWith(here) && p !== file && p !== vrma || !fs.existsSync(p)) {
    res.writeHead(404);
    return res.end();
  }
  res.writeHead(200, { 'content-type': types[path.extname(p)] || 'application/octet-stream' });
  fs.createReadStream(p).pipe(res);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const port = server.address().port;

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: [
    '--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--ignore-gpu-blocklist',
    '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run',
    '--disable-quic',
  ],
});
let code = 0;
try {
  const tab = await browser.newPage();
  const logs = [];
  tab.on('console', (m) => logs.push(m.text()));
  tab.on('pageerror', (e) => logs.push(String(e)));
  await tab.goto(`http://127.0.0.1:${port}/`);
  await tab.waitForFunction('window.done === true || window.failed', { timeout: 120000 });
  const failed = await tab.evaluate('window.failed');
  if (failed) {
    console.error(`vrma.mjs: the page failed: ${failed}\n${logs.join('\n')}`);
    code = 1;
  } else {
    console.log(await tab.evaluate('window.result'));
  }
} catch (e) {
  console.error(`vrma.mjs: ${e}`);
  code = 1;
} finally {
  await browser.close();
  server.close();
}
process.exit(code);
