// Every case of the shared vectors (tests/vectors/*.json) through jit in the WebAssembly build: each passes its
// expectations when its program and gradient computations are traced and replayed (`bprop-check --jit`), and
// every value case gives bit-identical values, gradients and second-order results through jit as eagerly (the
// native GoogleTest suite checks the same: tests/cpp/graph/jit_vectors_test.cpp).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { init } from '../../web/index.js';

const bp = await init();
const dir = new URL('../vectors/', import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

const bytes = (t) => {
  const d = t.dataSync();
  return Buffer.from(d.buffer, d.byteOffset, d.byteLength);
};
/** Why two results differ, or null when they have the same shape, dtype and bytes. */
function difference(got, want) {
  if (want === null || got === null) return got === want ? null : `one of them is missing (${got} vs ${want})`;
  if (got.dtype !== want.dtype) return `dtype ${got.dtype} vs ${want.dtype}`;
  if (got.shape.join() !== want.shape.join()) return `shape (${got.shape}) vs (${want.shape})`;
  return bytes(got).equals(bytes(want)) ? null : `${got.toString(8)} vs ${want.toString(8)}`;
}

test('the vector folder is not empty', () => assert.ok(files.length > 0));

let valueCases = 0;
for (const file of files) {
  const text = readFileSync(new URL(file, dir), 'utf8');
  const path = `tests/vectors/${file}`;
  const summary = bp.runVectors(text, path, { jit: true });
  test(`${file} through jit: every case passes its expectations`, () => {
    assert.deepEqual(summary.errors, []);
    assert.ok(summary.results.length > 0);
    const failed = summary.results.filter((r) => !r.passed).map((r) => r.line);
    assert.deepEqual(failed, []);
  });
  // Computed outside the test callbacks, so that the count below is known when the last test runs.
  const problems = bp.tidy(() => {
    const eager = bp.computeVectors(text, path);
    const traced = bp.computeVectors(text, path, { jit: true });
    const out = [];
    assert.equal(traced.cases.length, eager.cases.length);
    eager.cases.forEach((e, i) => {
      const t = traced.cases[i];
      if (e.error !== undefined || t.error !== undefined) {
        out.push(`${e.name}: raised (eager: ${e.error ?? 'nothing'}; jit: ${t.error ?? 'nothing'})`);
        return;
      }
      valueCases += 1;
      const d = [
        ['value', difference(t.value, e.value)],
        ['grads', t.grads.length === e.grads.length ? null : `${t.grads.length} vs ${e.grads.length} gradients`],
        ['second', t.second.length === e.second.length ? null : `${t.second.length} vs ${e.second.length}`],
        ...e.grads.map((g, k) => [`grads[${k}]`, difference(t.grads[k] ?? null, g)]),
        ...e.second.map((g, k) => [`second[${k}]`, difference(t.second[k] ?? null, g)]),
      ];
      for (const [what, why] of d) if (why !== null) out.push(`${e.name}: ${what}: ${why}`);
    });
    return out;
  });
  test(`${file}: every value case is bit-identical through jit and eagerly`, () => assert.deepEqual(problems, []));
}

test('the comparison covered the value cases, their gradients and second order', () => {
  assert.ok(valueCases > 300, `${valueCases} value cases`);
});

test('computeVectors with jit really traces: the bprop of a primitive sees traced inputs only then', () => {
  const seen = [];
  bp.registerPrimitive({
    name: 'jit_vectors_probe',
    forward: (a) => a.map((v) => 2 * v),
    bprop: (a, out, dout) => {
      seen.push(a.toString().includes('traced'));
      return [dout.mul(2)];
    },
  });
  const text = JSON.stringify({
    format: 'bprop-vectors/1',
    source: 'hand-written',
    cases: [{
      name: 'probe', dtype: 'float64',
      inputs: { x: { shape: [2], dtype: 'float64', data: [1, -3] } },
      program: [['y', 'jit_vectors_probe', 'x'], ['z', 'sum', 'y']], output: 'z', wrt: ['x'],
      expected: { value: { shape: [], dtype: 'float64', data: [-4] }, grads: { x: { shape: [2], dtype: 'float64', data: [2, 2] } } },
    }],
  });
  for (const jit of [false, true]) {
    seen.length = 0;
    const r = bp.runVectors(text, 'probe.json', { jit });
    assert.equal(r.passed, 1, r.results[0]?.line);
    assert.ok(seen.length > 0);
    assert.ok(seen.every((traced) => traced === jit), `jit ${jit}: bprop saw ${JSON.stringify(seen)}`);
  }
});

test('npx bprop-check --jit runs every vector file through jit', () => {
  const bin = fileURLToPath(new URL('../../web/bin/bprop-check.mjs', import.meta.url));
  const paths = files.map((f) => fileURLToPath(new URL(f, dir)));
  const r = spawnSync(process.execPath, [bin, '--jit', ...paths], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^\d+ passed, 0 failed\n$/);
  const both = spawnSync(process.execPath, [bin, '--jit', '--outcomes', paths[0]], { encoding: 'utf8' });
  assert.equal(both.status, 2);
  assert.match(both.stderr, /--outcomes/);
});
