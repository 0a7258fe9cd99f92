// Values that a well-formed file would not hold: sizes past every limit, integers past int64, numbers where
// integers are due, wrong JSON types, non-finite numbers.
//
// Sizes are either small (<= 64, and tensors of a few hundred elements at most) or >= 2^47, never in between:
// one tensor may hold 2^46 elements natively but only 2^31 bytes in WebAssembly, so a size in between would be
// an error in one build and a real allocation in the other, which is not a disagreement worth reporting.
import { nested, Raw } from './json-text.mjs';

export const HUGE_SIZES = [
  2n ** 47n,
  2n ** 53n + 1n,
  2n ** 62n,
  2n ** 63n - 1n, // INT64_MAX
];

/** Integers that overflow whatever multiplies, adds or negates them; past int64 too (read as unsigned or float). */
export const HOSTILE_INTS = [
  ...HUGE_SIZES,
  -(2n ** 47n),
  -(2n ** 63n), // INT64_MIN
  -(2n ** 63n) + 1n,
  2n ** 63n, // just past INT64_MAX: an unsigned 64-bit JSON integer
  2n ** 64n - 1n,
  2n ** 64n, // past every integer type: a float to the JSON parser
  2n ** 31n * 2n ** 17n,
];

/**
 * Numbers where an integer is due, and numbers at the edges of double. (1e999 is not here: the JSON parser
 * rejects the whole file for it, which the malformed files cover.)
 */
export const HOSTILE_NUMBERS = [
  1.5, -2.5, 0.5, 1e300, -1e300, 5e-324, 1.7976931348623157e308, new Raw('-0.0'), new Raw('1E+2'),
  new Raw('9223372036854775807.0'), new Raw('2.0'), 2 ** 53,
];

/** Values of the wrong JSON type for any attribute. */
export const WRONG_KIND_VALUES = [
  null, true, false, 'abc', '', '1', '[1]', 'nan', [], [[]], [[], []], [1, [2]], [[1, [2]]], [[[1]]], {}, { a: 1 },
  [null], [true], ['1'], [1.5], [1, 2.5], [[1, 2], 3], nested(40), nested(40, '1', 'object'),
];

/** Entries of float data that are not plain finite numbers. */
export const HOSTILE_FLOAT_DATA = ['NaN', 'Infinity', '1', '', null, true, [1], {}, new Raw('-0.0'),
  3.4028235677973366e38, 1e308, 5e-324, 2n ** 63n, -(2n ** 63n), 2n ** 64n];

/** Entries of int32 data out of range or of the wrong kind. */
export const HOSTILE_INT_DATA = [2147483648, -2147483649, 2n ** 63n, -(2n ** 63n), 2n ** 64n, 1.5, 'nan', null, true,
  new Raw('2.0'), new Raw('-0')];

// A fresh copy of a pool's value: mutations edit attribute lists in place, and must not edit the pools.
function copy(v) {
  if (Array.isArray(v)) return v.map(copy);
  if (v !== null && typeof v === 'object' && !(v instanceof Raw)) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copy(x)]));
  }
  return v;
}

/** One of `pool`'s values, copied. */
export function pickFrom(rng, pool) {
  return copy(rng.pick(pool));
}

export function hostileInt(rng) {
  return rng.pick(HOSTILE_INTS);
}

/** Any value that is wrong for an attribute of any kind. */
export function hostileAttrValue(rng) {
  return rng.weighted([
    [3, () => pickFrom(rng, WRONG_KIND_VALUES)],
    [3, () => rng.pick(HOSTILE_NUMBERS)],
    [3, () => hostileInt(rng)],
    [2, () => Array.from({ length: rng.int(1, 4) }, () => (rng.chance(0.5) ? hostileInt(rng) : rng.int(-3, 8)))],
    [1, () => [[hostileInt(rng), 0], [0, hostileInt(rng)]]],
    [1, () => Array.from({ length: rng.pick([65, 100, 1000]) }, () => 1)], // a rank past the limit
  ]);
}
