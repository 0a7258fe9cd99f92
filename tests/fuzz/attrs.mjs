// Attribute values for a statement, by the kind the op's schema gives (`bprop ops --json`): mostly values of
// the right kind near the inputs' ranks and shapes (so that ops run some of the time and their rules are
// exercised), sometimes out-of-range axes, and sometimes a value of the wrong kind altogether.
import { hostileAttrValue } from './hostile.mjs';
import { DTYPES } from './tensors.mjs';

const FLOATS = [0, 0.5, 1, -1, 2, 1e-5, 0.1, 3.5, 1e-12, 100, -0.25];

// A list of small integers whose non-zero entries multiply to at most 64 (a shape, multiples, a slice size).
function smallInts(rng, length, lo = -2, hi = 8) {
  const out = [];
  let product = 1;
  for (let i = 0; i < length; ++i) {
    let v = rng.int(lo, hi);
    if (v !== 0 && product * Math.abs(v) > 64) v = 1;
    product *= Math.abs(v) || 1;
    out.push(v);
  }
  return out;
}

function intListValue(rng, spec, shape) {
  const r = shape.length;
  if (spec.name === 'perm') {
    const perm = rng.shuffle([...Array(r).keys()]);
    return rng.chance(0.1) ? [...perm, rng.int(-1, r)] : perm;
  }
  return rng.weighted([
    // a shape of the inputs, maybe with one dimension changed: reshape, broadcast_to, x_shape, sizes
    [4, () => shape.map((d) => (rng.chance(0.15) ? rng.int(-1, 3) : d))],
    [4, () => smallInts(rng, rng.chance(0.7) ? r : rng.int(0, 5))],
    [1, () => smallInts(rng, r, 0, 2)],
  ]);
}

function axesValue(rng, r) {
  return rng.weighted([
    [2, null],
    [4, () => rng.int(-r - 1, r)],
    [3, () => rng.shuffle([...Array(r).keys()]).slice(0, rng.int(0, r))],
    [1, () => [rng.int(-r - 1, r), rng.int(-r - 1, r)]],
  ]);
}

/**
 * A value for attribute `spec` ({name, kind, choices}); `shapes` are the shapes of the case's inputs, whose
 * ranks and dimensions the value is drawn near. `hostileRate` is the share of values of the wrong kind.
 */
export function genAttrValue(rng, spec, shapes, hostileRate) {
  if (rng.chance(hostileRate)) return hostileAttrValue(rng);
  const shape = shapes.length > 0 ? rng.pick(shapes) : [];
  const r = shape.length;
  const smallInt = () => rng.weighted([[8, () => rng.int(-2, 8)], [1, () => rng.int(9, 64)]]);
  const axisLike = /axis|ndim/.test(spec.name);
  switch (spec.kind) {
    case 'int':
      return axisLike ? rng.int(-r - 1, r) : smallInt();
    case 'opt_int':
      return rng.chance(0.3) ? null : axisLike ? rng.int(-r - 1, r) : smallInt();
    case 'float':
      return rng.pick(FLOATS);
    case 'opt_float':
      return rng.chance(0.3) ? null : rng.pick(FLOATS);
    case 'bool':
      return rng.chance(0.5);
    case 'string':
      return spec.choices && rng.chance(0.9) ? rng.pick(spec.choices) : rng.pick(['', 'none', 'MEAN', 'bogus']);
    case 'dtype':
      return rng.chance(0.95) ? rng.pick(DTYPES) : rng.pick(['float16', 'bfloat16', 'float8', 'int64', 'Float32']);
    case 'axes':
      return axesValue(rng, r);
    case 'int_pair':
      return rng.chance(0.5) ? rng.int(0, 3) : [rng.int(0, 3), rng.int(0, 3)];
    case 'int_matrix': {
      const rows = rng.chance(0.8) ? r : rng.int(0, r + 1);
      return Array.from({ length: rows }, () => [rng.int(-1, 2), rng.int(-1, 2)]);
    }
    case 'int_list':
      return intListValue(rng, spec, shape);
    default:
      return hostileAttrValue(rng);
  }
}
