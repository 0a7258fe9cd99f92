// Every case of every file in tests/vectors/ through the WebAssembly build, each case its own test.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';

import { init } from '../../web/index.js';

const bp = await init();
const dir = new URL('../vectors/', import.meta.url);
const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

test('the vector folder is not empty', () => assert.ok(files.length > 0));

for (const file of files) {
  const summary = bp.runVectors(readFileSync(new URL(file, dir), 'utf8'), `tests/vectors/${file}`);
  test(`${file}: the file is well formed`, () => assert.deepEqual(summary.errors, []));
  for (const r of summary.results) {
    test(`${file}: ${r.name}`, () => assert.ok(r.passed, r.line));
  }
}

test('the same cases through the JS API: a vector case rebuilt with callOp and grad', () => {
  // One case of the format run by hand: out = sum(mul(x, y)), wrt x, so the gradient is y.
  const x = bp.tensor([1, 2, 3], { dtype: 'float64' });
  const y = bp.tensor([4, 5, 6], { dtype: 'float64' });
  const program = (a, b) => bp.callOp('sum', [bp.callOp('mul', [a, b])]);
  assert.equal(program(x, y).item(), 32);
  assert.deepEqual(bp.grad(program)(x, y).toArray(), [4, 5, 6]);
});
