// Validate a glTF/GLB with the Khronos glTF-Validator (npm `gltf-validator`) and print its report
// as JSON: `node validate.mjs FILE`. Exits non-zero only when the file cannot be read.
import fs from 'node:fs';
import path from 'node:path';
import validator from 'gltf-validator';

const file = process.argv[2];
if (!file) {
  console.error('validate.mjs: a file is required');
  process.exit(2);
}
const bytes = new Uint8Array(fs.readFileSync(file));
const report = await validator.validateBytes(bytes, {
  uri: path.basename(file),
  maxIssues: 100,
  externalResourceFunction: (uri) =>
    Promise.resolve(new Uint8Array(fs.readFileSync(path.join(path.dirname(file), decodeURIComponent(uri))))),
});
console.log(JSON.stringify(report));
