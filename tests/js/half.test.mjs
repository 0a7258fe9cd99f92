// float16 and bfloat16 in the JavaScript API: creation from numbers and from bits, reading values and bits, the
// same roundings as the native build (values computed in float32, rounded once), promotion and gradients.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { init, ValueError } from '../../web/index.js';

const bp = await init();

// Round a float32 value to float16 / bfloat16 bits, written here from the formats' definition (nearest, ties to
// even) by searching the neighbouring values: an independent reference for the module's conversion.
function decode(bits, dtype) {
  if (dtype === 'bfloat16') return new Float32Array(new Uint32Array([bits << 16]).buffer)[0];
  const sign = bits & 0x8000 ? -1 : 1;
  const e = (bits >> 10) & 31;
  const m = bits & 1023;
  if (e === 31) return m ? NaN : sign * Infinity;
  return e === 0 ? sign * m * 2 ** -24 : sign * (1024 + m) * 2 ** (e - 25);
}
function encode(x, dtype) {
  x = Math.fround(x);
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  const inf = dtype === 'bfloat16' ? 0x7f80 : 0x7c00;
  let lo = 0;
  let hi = inf; // decode(inf) is Infinity: the rounding's upper bound
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (decode(mid, dtype) <= a) lo = mid;
    else hi = mid;
  }
  const below = decode(lo, dtype);
  const above = hi === inf ? (dtype === 'bfloat16' ? 2 ** 128 : 65536) : decode(hi, dtype);
  const r = a - below < above - a ? lo : a - below > above - a ? hi : lo % 2 === 0 ? lo : hi;
  return sign | r;
}

test('half tensors: from numbers (rounded to nearest even) and from bits; values and bits read back', () => {
  for (const dtype of ['float16', 'bfloat16']) {
    const values = [0.1, -2.5, 1 / 3, 1e-6, 70000, -0, 3.14159];
    const t = bp.tensor(values, { dtype });
    assert.equal(t.dtype, dtype);
    const bits = t.bits();
    assert.ok(bits instanceof Uint16Array);
    assert.deepEqual(Array.from(bits), values.map((v) => encode(v, dtype)), dtype);
    const data = t.dataSync();
    assert.ok(data instanceof Float32Array);
    assert.deepEqual(Array.from(data), Array.from(bits, (b) => decode(b, dtype)));
    // from the bits themselves, unchanged
    const again = bp.tensor(bits, { dtype, shape: [bits.length] });
    assert.deepEqual(Array.from(again.bits()), Array.from(bits));
    assert.equal(bp.tensor([1.5], { dtype }).item(), 1.5);
    t.dispose();
    again.dispose();
  }
  assert.throws(() => bp.tensor([1, 2]).bits(), ValueError);
  assert.throws(() => bp.tensor([1], { dtype: 'float8' }), /float16, bfloat16/);
});

test('half ops compute in float32 and round once, as natively; promotion follows PyTorch', () => {
  const a = bp.randn([32], { seed: 1, dtype: 'float16' });
  const b = bp.randn([32], { seed: 2, dtype: 'float16' });
  const sum = a.add(b);
  assert.equal(sum.dtype, 'float16');
  const af = a.dataSync();
  const bf = b.dataSync();
  assert.deepEqual(Array.from(sum.bits()), Array.from(af, (v, i) => encode(Math.fround(v + bf[i]), 'float16')));
  assert.equal(a.add(bp.tensor([1])).dtype, 'float32');
  assert.equal(a.mul(2).dtype, 'float16');
  assert.equal(a.add(bp.tensor([1], { dtype: 'bfloat16' })).dtype, 'float32');
  assert.equal(bp.ones([4096], { dtype: 'bfloat16' }).sum().item(), 4096); // a float32 accumulator
  for (const t of [a, b, sum]) t.dispose();
});

test('gradients of half tensors are half', () => {
  const x = bp.tensor([0.5, -1.25, 2], { dtype: 'bfloat16' });
  const g = bp.grad((t) => t.sin().mul(t).sum())(x);
  assert.equal(g.dtype, 'bfloat16');
  const want = [0.5, -1.25, 2].map((v) => Math.sin(v) + v * Math.cos(v));
  Array.from(g.dataSync()).forEach((v, i) => assert.ok(Math.abs(v - want[i]) < 2e-2 * (1 + Math.abs(want[i]))));
  x.dispose();
  g.dispose();
});
