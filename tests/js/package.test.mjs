// The package as published: TypeScript declarations agree with an example, and `npm pack` gives a tarball
// that installs into an empty project and runs.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { packAndInstall, root } from './pack.mjs';

// Twice: with esnext.disposable in lib, and with a plain lib of es2022 and dom (the types declare Symbol.dispose
// themselves, so they check without that lib).
for (const config of ['tsconfig.json', 'tsconfig.plain.json']) {
  test(`tsc --noEmit --strict accepts the typed example (tests/js/types/example.ts, ${config})`, () => {
    const tsc = join(root, 'node_modules', '.bin', 'tsc');
    assert.ok(existsSync(tsc), 'typescript is a devDependency: run npm install');
    const r = spawnSync(tsc, ['--noEmit', '-p', join(root, 'tests/js', config)], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
  });
}

/** An app using the installed package with ESM import (main.js) and require (main.cjs). */
function writeApp(app) {
  writeFileSync(join(app, 'main.js'), [
    "import { init } from 'bprop';",
    'const bp = await init();',
    'const cube = (x) => x.mul(x).mul(x);',
    'console.log(bp.grad(cube)(bp.tensor(2)).item(), bp.grad(bp.grad(cube))(bp.tensor(2)).item(), bp.gemmKernel);',
  ].join('\n'));
  // require() gets the CommonJS build, with the classes there before init() resolves.
  writeFileSync(join(app, 'main.cjs'), [
    "const { init, Tensor, ShapeError } = require('bprop');",
    "if (typeof Tensor !== 'function' || typeof ShapeError !== 'function') throw new Error('classes missing');",
    'init().then((bp) => {',
    '  const cube = (x) => x.mul(x).mul(x);',
    '  let shapeError = false;',
    '  try { bp.tensor([1, 2]).add(bp.tensor([1, 2, 3])); } catch (e) { shapeError = e instanceof ShapeError; }',
    '  console.log(bp.grad(cube)(bp.tensor(2)).item(), bp.tensor(1) instanceof Tensor, shapeError);',
    '});',
  ].join('\n'));
}

test('npm pack: the tarball installs into an empty project, imports and differentiates', () => {
  const { app, files } = packAndInstall();
  const modules = readdirSync(join(root, 'web')).filter((f) => f.endsWith('.js')).map((f) => `web/${f}`);
  for (const f of ['LICENSE', 'web/dist/bprop.mjs', 'web/dist/bprop.cjs', 'web/dist/bprop.wasm', 'web/index.d.ts', 'web/bin/bprop-check.mjs', ...modules]) {
    assert.ok(files.includes(f), `${f} is in the package`);
  }
  writeApp(app);
  // (this Node 20 without --experimental-wasm-relaxed-simd: the SIMD128 GEMM)
  const out = execFileSync(process.execPath, ['main.js'], { cwd: app, encoding: 'utf8' });
  assert.equal(out.trim(), '12 12 simd128');
  const required = execFileSync(process.execPath, ['main.cjs'], { cwd: app, encoding: 'utf8' });
  assert.equal(required.trim(), '12 true true');
  assert.ok(existsSync(join(app, 'node_modules', '.bin', 'bprop-check')));
});

// Node 22 from scripts/setup-node22.sh (run by npm test): the published binary exists for Linux x86-64 only.
const node22 = join(root, 'build', 'node22', 'bin', 'node');
const linuxX64 = process.platform === 'linux' && process.arch === 'x64';
test('Node 22: the installed package imports, requires and differentiates, with relaxed SIMD and no flag', { skip: !linuxX64 && 'Node 22 is fetched for Linux x86-64 only' }, () => {
  assert.ok(existsSync(node22), 'no build/node22/bin/node: run bash scripts/setup-node22.sh');
  assert.match(execFileSync(node22, ['--version'], { encoding: 'utf8' }), /^v22\./);
  const { app } = packAndInstall();
  writeApp(app);
  assert.equal(execFileSync(node22, ['main.js'], { cwd: app, encoding: 'utf8' }).trim(), '12 12 relaxed-simd');
  assert.equal(execFileSync(node22, ['main.cjs'], { cwd: app, encoding: 'utf8' }).trim(), '12 true true');
  // and the package's own command, on a vector file
  const check = spawnSync(node22, [join(app, 'node_modules', 'bprop', 'web', 'bin', 'bprop-check.mjs'), join(root, 'tests', 'vectors', 'unary.json')], { encoding: 'utf8' });
  assert.equal(check.status, 0, check.stdout + check.stderr);
  assert.match(check.stdout, /passed, 0 failed/);
});
