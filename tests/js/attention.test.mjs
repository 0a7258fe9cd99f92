// scaled_dot_product_attention from JavaScript: the op against its composition from matmul and softmax, masks and
// is_causal as attributes, gradients (second order too), jit as one node, fully masked rows, and errors.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { DTypeError, init, ShapeError } from '../../web/index.js';

const bp = await init();

// Deterministic values in [-1, 1).
function values(n, seed) {
  let s = seed >>> 0;
  return Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 31 - 1;
  });
}
const t = (shape, seed) => bp.tensor(values(shape.reduce((a, b) => a * b, 1), seed), { shape, dtype: 'float64' });

function composed(q, k, v, isCausal) {
  const [L, E] = q.shape.slice(-2);
  const S = k.shape[k.shape.length - 2];
  let s = bp.ops.matmul(q, bp.ops.transpose(k, { perm: [0, 2, 1] })).mul(1 / Math.sqrt(E));
  if (isCausal) {
    const keep = [];
    for (let i = 0; i < L; i++) for (let j = 0; j < S; j++) keep.push(j <= i);
    s = bp.ops.where(bp.tensor(keep, { shape: [L, S] }), s, bp.tensor(-Infinity, { dtype: 'float64' }));
  }
  return bp.ops.matmul(bp.ops.softmax(s), v);
}

const maxDiff = (a, b) => Math.max(...Array.from(a.dataSync(), (x, i) => Math.abs(x - b.dataSync()[i])));

test('attention: value and gradients match the composition, causal and not, to second order', () => {
  const q = t([2, 70, 8], 1), k = t([2, 90, 8], 2), v = t([2, 90, 5], 3);  // past one 64-wide tile
  for (const isCausal of [false, true]) {
    const op = (a, b, c) => bp.ops.scaledDotProductAttention(a, b, c, null, { isCausal });
    assert.ok(maxDiff(op(q, k, v), composed(q, k, v, isCausal)) < 1e-12);
    const loss = (f) => (a, b, c) => f(a, b, c).square().sum();
    const g = bp.grad(loss(op), { gradPosition: [0, 1, 2] })(q, k, v);
    const want = bp.grad(loss((a, b, c) => composed(a, b, c, isCausal)), { gradPosition: [0, 1, 2] })(q, k, v);
    for (let i = 0; i < 3; i++) assert.ok(maxDiff(g[i], want[i]) < 1e-10, `input ${i}, causal ${isCausal}`);
  }
  // second order: d/dq of sum(d loss / dq), tiled against composed
  const small = [t([3, 4], 4), t([5, 4], 5), t([5, 2], 6)];
  const dq = (f) => bp.grad((a, b, c) => bp.grad((x) => f(x, b, c).square().sum())(a).sum());
  const got = dq((a, b, c) => bp.ops.scaledDotProductAttention(a, b, c))(...small);
  const want = dq((a, b, c) => composed(a.reshape([1, 3, 4]), b.reshape([1, 5, 4]), c.reshape([1, 5, 2])))(...small);
  assert.ok(maxDiff(got, want) < 1e-10);
});

test('attention: a bool mask, a fully masked row gives zeros, jit keeps the op one node', () => {
  const q = t([3, 2], 7), k = t([4, 2], 8), v = t([4, 3], 9);
  const mask = bp.tensor([true, false, true, true, false, false, false, false, true, true, true, false], { shape: [3, 4] });
  const out = bp.ops.scaled_dot_product_attention(q, k, v, mask).toArray();
  assert.deepEqual(out[1], [0, 0, 0]);
  assert.ok(out[0].every((x) => x !== 0 && Number.isFinite(x)));
  const f = bp.jit((a, b, c) => bp.ops.scaledDotProductAttention(a, b, c, mask, { scale: 0.5 }).sum());
  const eager = bp.ops.scaledDotProductAttention(q, k, v, mask, { scale: 0.5 }).sum().item();
  assert.equal(f(q, k, v).item(), eager);
  assert.equal(f(q, k, v).item(), eager);
  assert.ok(f.stats().nodes <= 3, `nodes ${f.stats().nodes}`);
});

test('attention: bad arguments raise typed errors naming the op and the argument', () => {
  const q = bp.zeros([2, 3, 4]), v = bp.zeros([2, 5, 6]);
  assert.throws(() => bp.ops.scaledDotProductAttention(q, bp.zeros([2, 5, 3]), v),
    (e) => e instanceof ShapeError && /scaled_dot_product_attention/.test(e.message) && /'key' of shape \(2, 5, 3\)/.test(e.message));
  assert.throws(() => bp.ops.scaledDotProductAttention(q, bp.zeros([2, 5, 4]), v, bp.zeros([3, 4])), ShapeError);
  assert.throws(() => bp.ops.scaledDotProductAttention(q, bp.zeros([2, 5, 4], { dtype: 'float64' }), v), DTypeError);
});
