// web/index.d.ts against the op registry: its OpName union and TensorOps interface are what
// tools/gen-op-types.mjs writes from the registered ops, so an op added without its types fails here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { generatedTypes } from '../../tools/gen-op-types.mjs';

const dts = readFileSync(new URL('../../web/index.d.ts', import.meta.url), 'utf8');

test('the op types of index.d.ts are the registry\'s (node tools/gen-op-types.mjs writes them)', async () => {
  const want = await generatedTypes(dts);
  assert.ok(want === dts, 'web/index.d.ts is out of date: run node tools/gen-op-types.mjs');
  const union = dts.match(/export type OpName =([^;]*);/)[1];
  for (const name of ["'scaled_dot_product_attention'", "'scaledDotProductAttention'", "'gelu_grad'"]) {
    assert.ok(union.includes(name), `${name} in OpName`);
  }
  assert.match(dts, /export interface TensorOps \{[^}]*\n {2}matmul\(\.\.\.args: OpArg\[\]\): Tensor;/);
});
