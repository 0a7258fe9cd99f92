// Input tensors for generated cases: mostly well-formed (small shapes, ranks 0..5, zero and one dimensions,
// nan/inf data), sometimes not (sizes past every limit, negative sizes, ranks past the limit, data whose
// length or kind does not match, unknown dtypes).
import { HOSTILE_FLOAT_DATA, HOSTILE_INT_DATA, HUGE_SIZES, pickFrom } from './hostile.mjs';

export const DTYPES = ['float32', 'float64', 'int32', 'bool'];
export const MAX_ELEMENTS = 256;

export const numel = (shape) => shape.reduce((n, d) => n * d, 1);
// Zero dimensions aside: what an op that reduces the zero dimension away would allocate.
const nonzeroNumel = (shape) => shape.reduce((n, d) => n * (d || 1), 1);

/** A small shape: rank 0..5, dimensions 0..8 (rarely 64), at most MAX_ELEMENTS elements zero dimensions aside. */
export function smallShape(rng, rank = rng.weighted([[2, 0], [4, 1], [5, 2], [3, 3], [3, 4], [1, 5]])) {
  const shape = [];
  for (let i = 0; i < rank; ++i) {
    let d = rng.weighted([[2, 0], [5, 1], [12, () => rng.int(2, 4)], [3, () => rng.int(5, 8)], [0.3, 64]]);
    if (nonzeroNumel(shape) * d > MAX_ELEMENTS) d = 1;
    shape.push(d);
  }
  return shape;
}

/** A shape that broadcasts with `base` (some dimensions 1, some leading ones dropped), or `base` itself. */
export function broadcastingShape(rng, base) {
  if (rng.chance(0.5)) return [...base];
  const drop = rng.int(0, base.length);
  return base.slice(drop).map((d) => (rng.chance(0.3) ? 1 : d));
}

/** A shape no reader should accept, or one past the size limits (which it must reject without allocating). */
export function hostileShape(rng) {
  return rng.weighted([
    [3, () => [...smallShape(rng, rng.int(0, 3)), rng.pick(HUGE_SIZES)]],
    [2, () => [0, rng.pick(HUGE_SIZES)]],
    [1, () => [rng.pick(HUGE_SIZES), rng.pick(HUGE_SIZES)]],
    [2, () => [rng.int(1, 3), -rng.int(1, 3)]],
    [1, () => [-(2n ** 63n)]],
    [2, () => Array(rng.pick([64, 65, 100, 1000])).fill(1)], // ranks at and past the limit
    [1, () => [2.5]],
    [1, () => ['3']],
    [1, () => [[2]]],
    [1, () => null],
    [1, () => 4],
  ]);
}

function value(rng, dtype) {
  if (dtype === 'bool') return rng.chance(0.5);
  // Small integers, so that int32 inputs work as indices and class labels some of the time.
  if (dtype === 'int32') {
    return rng.weighted([[8, () => rng.int(0, 4)], [2, () => rng.int(-3, 9)], [0.1, 2147483647], [0.1, -2147483648]]);
  }
  return rng.weighted([
    [10, () => Math.round((rng.next() * 8 - 4) * 1000) / 1000],
    [3, () => rng.int(-3, 3)],
    [0.4, 'nan'],
    [0.3, 'inf'],
    [0.3, '-inf'],
    [0.2, 1e30],
    [0.2, 1e-30],
    [0.1, 5e-324],
  ]);
}

const HOSTILE_DATA = { int32: HOSTILE_INT_DATA, bool: [0, 1, 'true', null] };

// One thing wrong with a tensor object (its case is then left out by the reader, or its shape is past the limits).
function spoil(rng, t) {
  const n = t.data.length;
  rng.weighted([
    [3, () => Object.assign(t, { shape: hostileShape(rng), data: rng.pick([[], [1], [1, 2]]) })],
    [2, () => n > 0 && (t.data[rng.int(0, n - 1)] = pickFrom(rng, HOSTILE_DATA[t.dtype] ?? HOSTILE_FLOAT_DATA))],
    [2, () => (n > 0 && rng.chance(0.5) ? t.data.pop() : t.data.push(t.data[0] ?? 1))],
    [1, () => (t.dtype = rng.pick(['float8', 'int64', '', 'Float32', 3, null]))],
    [1, () => (t.data = rng.pick([null, 'abc', { a: 1 }, [t.data]]))],
    [0.5, () => delete t.dtype],
    [0.5, () => (t.extra = 1)],
  ]);
}

/**
 * A TENSOR object for a vector file: {shape, dtype, data}. With `hostile`, one in four is malformed or past the
 * size limits (one thing wrong each).
 */
export function genTensor(rng, { shape = smallShape(rng), dtype = rng.pick(DTYPES), hostile = true } = {}) {
  const t = { shape, dtype, data: Array.from({ length: numel(shape) }, () => value(rng, dtype)) };
  if (hostile && rng.chance(0.25)) spoil(rng, t);
  return t;
}
