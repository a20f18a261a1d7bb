// Play one animation of a glTF file with three.js (GLTFLoader + AnimationMixer) in headless
// Chromium and print what it poses: every mesh node's morph weights and every node's local
// rotation and translation at the given times, by glTF node index.
//
//   node mixer.mjs --file PATH --clip NAME --times t0,t1,...
//
// Prints {"weights": {node: [[w…] per time]}, "rotation": {node: [[x,y,z,w] per time]},
// "translation": {node: [[x,y,z] per time]}} on stdout. Meshopt-compressed and KTX2 files load
// (three's MeshoptDecoder and KTX2Loader with its Basis transcoder). Exits non-zero with a message
// when the page fails.

import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
for (const k of ['file', 'clip', 'times']) {
  if (!args[k]) {
    console.error(`mixer.mjs: --${k} is required`);
    process.exit(2);
  }
}
const file = path.resolve(args.file);
const times = args.times.split(',').map(Number);
const types = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.html': 'text/html', '.wasm': 'application/wasm' };

const page = `<!doctype html><html><head>
<script type="importmap">{"imports":{
  "three":"/node_modules/three/build/three.module.js",
  "three/addons/":"/node_modules/three/examples/jsm/"}}</script></head>
<body><script type="module">
import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { KTX2Loader } from 'three/addons/loaders/KTX2Loader.js';
import { MeshoptDecoder } from 'three/addons/libs/meshopt_decoder.module.js';
try {
  const renderer = new THREE.WebGLRenderer();
  const ktx2 = new KTX2Loader().setTranscoderPath('/node_modules/three/examples/jsm/libs/basis/').detectSupport(renderer);
  const loader = new GLTFLoader().setMeshoptDecoder(MeshoptDecoder).setKTX2Loader(ktx2);
  const gltf = await loader.loadAsync('/file/${encodeURIComponent(path.basename(file))}');
  const clip = gltf.animations.find((a) => a.name === ${JSON.stringify(args.clip)});
  if (!clip) throw new Error('no animation named ' + ${JSON.stringify(args.clip)} + ' among ' + gltf.animations.map((a) => a.name).join(', '));
  const mixer = new THREE.AnimationMixer(gltf.scene);
  mixer.clipAction(clip).play();
  // glTF node index of each three object (a multi-primitive mesh node is a Group of Meshes).
  const nodeOf = (o) => {
    const a = gltf.parser.associations.get(o);
    if (a && a.nodes !== undefined) return a.nodes;
    return null;
  };
  const out = { weights: {}, rotation: {}, translation: {} };
  for (const t of ${JSON.stringify(times)}) {
    mixer.setTime(t);
    const seen = new Set();
    gltf.scene.traverse((o) => {
      const n = nodeOf(o);
      if (n !== null) {
        (out.rotation[n] ??= []).push(o.quaternion.toArray());
        (out.translation[n] ??= []).push(o.position.toArray());
      }
      if (o.isMesh && o.morphTargetInfluences && o.morphTargetInfluences.length) {
        const node = n ?? (o.parent ? nodeOf(o.parent) : null);
        if (node !== null && !seen.has(node)) {
          seen.add(node);
          (out.weights[node] ??= []).push(Array.from(o.morphTargetInfluences));
        }
      }
    });
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
  } else if (url === `/file/${path.basename(file)}`) {
    p = file;
  }
  if (!p || !p.startsWith(here) && p !== file || !fs.existsSync(p)) {
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
    console.error(`mixer.mjs: the page failed: ${failed}\n${logs.join('\n')}`);
    code = 1;
  } else {
    console.log(await tab.evaluate('window.result'));
  }
} catch (e) {
  console.error(`mixer.mjs: ${e}`);
  code = 1;
} finally {
  await browser.close();
  server.close();
}
process.exit(code);
