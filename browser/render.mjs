// Render one splat file in a real viewer in headless Chromium and save a screenshot.
//
//   node render.mjs [--viewer spark|babylon] --file PATH --eye x,y,z --target x,y,z --fov DEG
//                   --size W,H --bg r,g,b --out PNG
//
// spark (default): three.js + Spark's SplatMesh (`.ply`, `.spz`). babylon: Babylon.js's glTF loader
// with its KHR_gaussian_splatting extension (`.glb`).
// The file's folder is served over http://127.0.0.1 (ES modules do not load from file://) beside
// this folder's node_modules; the camera is three.js's PerspectiveCamera (vertical fov in degrees,
// +Y up) looking from eye at target, as mien's preview camera. Chromium is Debian's
// (/usr/bin/chromium, or $CHROMIUM), driven by puppeteer-core with software WebGL2 (SwiftShader).
// Exits non-zero with a message when the page fails to load or render.

import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
);
for (const k of ['file', 'eye', 'target', 'fov', 'size', 'out']) {
  if (!args[k]) {
    console.error(`render.mjs: --${k} is required`);
    process.exit(2);
  }
}
const nums = (s) => s.split(',').map(Number);
const [w, h] = nums(args.size);
const bg = args.bg ? nums(args.bg) : [0, 0, 0];
const file = path.resolve(args.file);
const types = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.html': 'text/html', '.wasm': 'application/wasm' };

const sparkPage = `<!doctype html><html><head><style>html,body{margin:0;background:#000}</style>
<script type="importmap">{"imports":{
  "three":"/node_modules/three/build/three.module.js",
  "three/addons/":"/node_modules/three/examples/jsm/",
  "@sparkjsdev/spark":"/node_modules/@sparkjsdev/spark/dist/spark.module.js"}}</script></head>
<body><script type="module">
import * as THREE from 'three';
import { SparkRenderer, SplatMesh } from '@sparkjsdev/spark';
try {
  const renderer = new THREE.WebGLRenderer({ antialias: false, preserveDrawingBuffer: true });
  renderer.setPixelRatio(1);
  renderer.setSize(${w}, ${h});
  renderer.setClearColor(new THREE.Color(${bg[0]}, ${bg[1]}, ${bg[2]}), 1);
  document.body.appendChild(renderer.domElement);
  const scene = new THREE.Scene();
  scene.add(new SparkRenderer({ renderer }));
  const camera = new THREE.PerspectiveCamera(${Number(args.fov)}, ${w / h}, 0.001, 1000);
  camera.position.set(${nums(args.eye).join(',')});
  camera.up.set(0, 1, 0);
  camera.lookAt(${nums(args.target).join(',')});
  const splat = new SplatMesh({ url: '/file/${encodeURIComponent(path.basename(file))}' });
  scene.add(splat);
  await splat.initialized;
  for (let i = 0; i < 30; i++) {
    renderer.render(scene, camera);
    await new Promise((r) => requestAnimationFrame(r));
  }
  window.splats = splat.numSplats ?? null;
  window.done = true;
} catch (e) {
  window.failed = String(e && e.stack || e);
}
</script></body></html>`;

// Babylon.js (UMD build) reads KHR_gaussian_splatting `.glb` through its glTF loader; the scene is
// right-handed so no handedness root is added and the camera matches three.js's.
const babylonPage = `<!doctype html><html><head><style>html,body{margin:0;background:#000}</style>
<script src="/node_modules/babylonjs/babylon.js"></script>
<script src="/node_modules/babylonjs-loaders/babylonjs.loaders.min.js"></script></head>
<body><canvas id="c" width="${w}" height="${h}" style="width:${w}px;height:${h}px"></canvas><script>
(async () => {
try {
  const canvas = document.getElementById('c');
  const engine = new BABYLON.Engine(canvas, false, { preserveDrawingBuffer: true, antialias: false });
  engine.setHardwareScalingLevel(1);
  const scene = new BABYLON.Scene(engine);
  scene.useRightHandedSystem = true;
  scene.clearColor = new BABYLON.Color4(${bg[0]}, ${bg[1]}, ${bg[2]}, 1);
  const camera = new BABYLON.FreeCamera('c', new BABYLON.Vector3(${nums(args.eye).join(',')}), scene);
  camera.upVector = new BABYLON.Vector3(0, 1, 0);
  camera.setTarget(new BABYLON.Vector3(${nums(args.target).join(',')}));
  camera.fov = ${(Number(args.fov) * Math.PI) / 180};
  camera.minZ = 0.001;
  camera.maxZ = 1000;
  const result = await BABYLON.SceneLoader.ImportMeshAsync('', '/file/', '${encodeURIComponent(path.basename(file))}', scene);
  const splats = result.meshes.filter((m) => m.getClassName() === 'GaussianSplattingMesh');
  if (splats.length === 0) throw new Error('no GaussianSplattingMesh in the loaded file');
  engine.runRenderLoop(() => scene.render());
  const t0 = performance.now();
  while (!splats.every((m) => m._readyToDisplay) && performance.now() - t0 < 60000) {
    await new Promise((r) => setTimeout(r, 100));
  }
  for (let i = 0; i < 30; i++) await new Promise((r) => requestAnimationFrame(r));
  window.splats = splats.reduce((n, m) => n + (m.splatCount ?? 0), 0);
  window.done = true;
} catch (e) {
  window.failed = String(e && e.stack || e);
}
})();
</script></body></html>`;
const viewer = args.viewer || 'spark';
if (viewer !== 'spark' && viewer !== 'babylon') {
  console.error(`render.mjs: --viewer must be spark or babylon, not ${viewer}`);
  process.exit(2);
}
const page = viewer === 'babylon' ? babylonPage : sparkPage;


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
  await tab.setViewport({ width: w, height: h });
  await tab.goto(`http://127.0.0.1:${port}/`);
  await tab.waitForFunction('window.done === true || window.failed', { timeout: 120000 });
  const failed = await tab.evaluate('window.failed');
  if (failed) {
    console.error(`render.mjs: the page failed: ${failed}\n${logs.join('\n')}`);
    code = 1;
  } else {
    const canvas = await tab.$('canvas');
    await canvas.screenshot({ path: args.out });
    console.log(JSON.stringify({ splats: await tab.evaluate('window.splats'), out: args.out }));
  }
} catch (e) {
  console.error(`render.mjs: ${e}`);
  code = 1;
} finally {
  await browser.close();
  server.close();
}
process.exit(code);
