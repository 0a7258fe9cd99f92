// One generated vector case: 1-3 input tensors, a program of 1-4 statements over ops of the catalogue, maybe
// wrt names and a sens. Most of it is well-formed, so that programs run and fail deep inside ops rather than
// only in the reader; the rest is hostile (see hostile.mjs). `expected` is a filler: the outcomes mode ignores it.
import { genAttrValue } from './attrs.mjs';
import { hostileAttrValue } from './hostile.mjs';
import { broadcastingShape, genTensor, smallShape } from './tensors.mjs';

const FLOAT = new Set(['float32', 'float64']);
const UNKNOWN_OPS = ['no_such_op', 'Add', 'matmul ', '', 'sum_grad', 'relu6', '__proto__'];

// A name for an argument: usually the most recent value (so that statements chain), sometimes any earlier one.
function pickName(rng, names) {
  return rng.chance(0.55) ? names[names.length - 1] : rng.pick(names);
}

// Arguments that want integer or bool tensors get one of those inputs more often than chance would give.
const WANTED_DTYPE = { indices: 'int32', labels: 'int32', cond: 'bool' };

function pickArgument(rng, input, names, inputDtypes) {
  const wanted = WANTED_DTYPE[input.name];
  if (wanted && rng.chance(0.7)) {
    const matching = Object.keys(inputDtypes).filter((n) => inputDtypes[n] === wanted);
    if (matching.length > 0) return rng.pick(matching);
  }
  return pickName(rng, names);
}

function genStatement(rng, op, out, names, shapes, inputDtypes, hostile, attrHostility) {
  const st = [out, op.name];
  if (op.variadic) {
    st.push(Array.from({ length: rng.weighted([[1, 0], [4, 1], [6, 2], [3, 3]]) }, () => pickName(rng, names)));
  } else {
    for (const input of op.inputs) {
      st.push(input.optional && rng.chance(0.4) ? null : pickArgument(rng, input, names, inputDtypes));
    }
    while (st.length > 2 && st[st.length - 1] === null && rng.chance(0.5)) st.pop();
  }
  const attrs = {};
  for (const spec of op.attrs) {
    if (spec.required ? rng.chance(0.97) : rng.chance(0.5)) attrs[spec.name] = genAttrValue(rng, spec, shapes, attrHostility);
  }
  if (hostile && rng.chance(0.1)) attrs[rng.pick(['axiz', 'keep_dims', 'shape', 'alpha', ''])] = hostileAttrValue(rng);
  if (Object.keys(attrs).length > 0 || rng.chance(0.1)) st.push(attrs);
  if (hostile && rng.chance(0.15)) {
    // the wrong number of arguments, a list where a name is due, a null for a required tensor
    rng.weighted([
      [1, () => st.splice(2, 0, pickName(rng, names))],
      [1, () => st.length > 2 && st.splice(2, 1)],
      [1, () => st.length > 2 && (st[2] = [pickName(rng, names)])],
      [1, () => st.length > 2 && (st[2] = null)],
    ]);
  }
  return st;
}

function genInputs(rng, hostile) {
  const base = smallShape(rng);
  const inputs = {};
  const count = rng.weighted([[4, 1], [5, 2], [3, 3]]);
  for (let i = 0; i < count; ++i) {
    const shape = rng.weighted([[5, () => broadcastingShape(rng, base)], [3, () => smallShape(rng)]]);
    const dtype = rng.weighted([[40, 'float32'], [25, 'float64'], [25, 'int32'], [10, 'bool']]);
    inputs[`x${i}`] = genTensor(rng, { shape, dtype, hostile });
  }
  return inputs;
}

/**
 * A CASE object (docs/vectors.md). Attribute values are of the wrong kind now and then; one case in three is
 * also malformed elsewhere (inputs, arguments, unknown ops, wrt, fields). `hostile: false` gives neither.
 */
export function genCase(rng, catalogue, name, { hostile = true } = {}) {
  const attrHostility = hostile ? 0.08 : 0;
  hostile = hostile && rng.chance(0.3);
  const inputs = genInputs(rng, hostile);
  const names = Object.keys(inputs);
  const shapes = Object.values(inputs).map((t) => t.shape).filter(Array.isArray);
  const inputDtypes = Object.fromEntries(Object.entries(inputs).map(([n, t]) => [n, t.dtype]));
  const program = [];
  const statements = rng.weighted([[4, 1], [3, 2], [2, 3], [1, 4]]);
  for (let i = 0; i < statements; ++i) {
    const op = hostile && rng.chance(0.08) ? { ...rng.pick(catalogue), name: rng.pick(UNKNOWN_OPS) } : rng.pick(catalogue);
    const out = `y${i}`;
    program.push(genStatement(rng, op, out, names, shapes, inputDtypes, hostile, attrHostility));
    names.push(out);
  }
  const c = { name };
  const caseDtype = rng.weighted([[45, 'float32'], [35, 'float64'], [18, undefined], [hostile ? 5 : 0, 'int32']]);
  if (caseDtype !== undefined) c.dtype = caseDtype;
  c.inputs = inputs;
  c.program = program;
  c.output = rng.chance(0.9) ? names[names.length - 1] : rng.pick(names);
  const floatInputs = Object.entries(inputs).filter(([, t]) => FLOAT.has(t.dtype)).map(([n]) => n);
  if (rng.chance(0.5) && floatInputs.length > 0) {
    c.wrt = rng.shuffle(floatInputs).slice(0, rng.int(1, floatInputs.length));
    if (hostile && rng.chance(0.1)) c.wrt.push(rng.pick([...Object.keys(inputs), 'y0', 'nope']));
    if (rng.chance(0.25)) {
      // The first wrt input's shape is the output's for elementwise programs; any other shape is wrong.
      const first = inputs[c.wrt[0]].shape;
      const wellFormed = Array.isArray(first) && first.every((d) => Number.isInteger(d) && d >= 0 && d <= 64);
      const shape = wellFormed && rng.chance(0.6) ? first : smallShape(rng);
      c.sens = genTensor(rng, { shape, dtype: rng.pick(['float32', 'float64', hostile ? 'int32' : 'float32']), hostile });
    }
  }
  c.expected = { error: 'value' };
  if (hostile && rng.chance(0.03)) c.expected = rng.pick([{ error: 'bogus' }, {}, { value: null }]);
  if (hostile && rng.chance(0.03)) c.rtol = rng.pick(['1e-5', -1, null, 1e300]);
  if (hostile && rng.chance(0.02)) c.unknown_field = true;
  return c;
}
