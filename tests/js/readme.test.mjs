// The README's JavaScript quick start, run as written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../web/index.js';

test('README quick start', async () => {
  const bp = await init();
  const f = (x) => x.mul(x).mul(x);
  const df = bp.grad(f);
  const d2f = bp.grad(df);
  assert.equal(df(bp.tensor(2)).item(), 12);
  assert.equal(d2f(bp.tensor(2)).item(), 12);
  const w = new bp.Parameter(bp.randn([3, 2], { seed: 1 }), 'w');
  const loss = (x, y) => bp.ops.crossEntropy(x.matmul(w), y);
  const [value, [gx, gw]] = bp.valueAndGrad(loss, { gradPosition: 0, weights: [w] })(
    bp.ones([4, 3]), bp.tensor([0, 1, 1, 0], { dtype: 'int32' }));
  assert.ok(Number.isFinite(value.item()));
  assert.deepEqual(gx.shape, [4, 3]);
  assert.deepEqual(gw[0].shape, [3, 2]);
});
