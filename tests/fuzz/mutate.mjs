// Cases made by mutating the shared gradient vectors (tests/vectors/*.json): every op has well-formed cases
// there, so a mutation of one (an attribute changed, a shape or dtype changed, indices out of range, one more
// statement, another op) fails or runs deep inside the op, where cases made from scratch rarely get (a
// convolution needs an NCHW input and a matching weight; a loss needs labels within its classes).
import { readdirSync, readFileSync } from 'node:fs';

import { genAttrValue } from './attrs.mjs';
import { hostileAttrValue, hostileInt } from './hostile.mjs';
import { genTensor, smallShape } from './tensors.mjs';

const VECTORS = new URL('../vectors/', import.meta.url);

let corpus;
/** Every case of the shared vector files, in file order (read once). */
export function vectorCorpus() {
  corpus ??= readdirSync(VECTORS)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .flatMap((f) => JSON.parse(readFileSync(new URL(f, VECTORS), 'utf8')).cases);
  return corpus;
}

const clone = (v) => structuredClone(v);

// A shape near `shape`: one dimension changed (to 0, 1, one more or one less), one added or one dropped.
function nearShape(rng, shape) {
  const s = [...shape];
  const k = rng.int(0, Math.max(0, s.length - 1));
  rng.weighted([
    [4, () => s.length > 0 && (s[k] = rng.pick([0, 1, s[k] + 1, Math.max(0, s[k] - 1)]))],
    [1, () => s.splice(k, 0, rng.pick([1, 2]))],
    [1, () => s.splice(k, 1)],
  ]);
  return s.reduce((n, d) => n * (d || 1), 1) <= 512 ? s : shape;
}

function indexValue(rng, t) {
  return rng.weighted([[3, () => rng.int(-3, 12)], [1, () => -1], [1, 2147483647], [1, -2147483648], [1, () => t.data.length]]);
}

const MUTATIONS = [
  // an attribute of a statement: another value of its kind, or of the wrong kind
  [5, (rng, c, catalogue) => {
    const st = rng.pick(c.program);
    const op = catalogue.find((o) => o.name === st[1]);
    if (!op || op.attrs.length === 0) return;
    const spec = rng.pick(op.attrs);
    let attrs = st[st.length - 1];
    if (attrs === null || typeof attrs !== 'object' || Array.isArray(attrs)) st.push((attrs = {}));
    const shapes = Object.values(c.inputs).map((t) => t.shape);
    attrs[spec.name] = rng.chance(0.3) ? hostileAttrValue(rng) : genAttrValue(rng, spec, shapes, 0);
  }],
  // an input of another shape (its data regenerated), or another dtype
  [4, (rng, c) => {
    const name = rng.pick(Object.keys(c.inputs));
    const t = c.inputs[name];
    const shape = rng.chance(0.8) ? nearShape(rng, t.shape) : smallShape(rng);
    const dtype = rng.chance(0.7) ? t.dtype : rng.pick(['float32', 'float64', 'int32', 'bool']);
    c.inputs[name] = genTensor(rng, { shape, dtype, hostile: false });
  }],
  // integer data out of range (indices, labels) or non-finite float data
  [4, (rng, c) => {
    const t = rng.pick(Object.values(c.inputs));
    if (t.data.length === 0) return;
    const k = rng.int(0, t.data.length - 1);
    if (t.dtype === 'int32') t.data[k] = indexValue(rng, t);
    else if (t.dtype !== 'bool') t.data[k] = rng.pick(['nan', 'inf', '-inf', 0, -0, 1e38, 5e-324]);
  }],
  // one more statement on what the case computes
  [3, (rng, c, catalogue) => {
    const op = rng.pick(catalogue);
    const names = [...Object.keys(c.inputs), ...c.program.map((st) => st[0])];
    const out = `m${c.program.length}`;
    const arg = (input, n) => (n === 0 ? c.output : input.optional && rng.chance(0.5) ? null : rng.pick(names));
    const args = op.variadic ? [[c.output, rng.pick(names)]] : op.inputs.map(arg);
    const attrs = {};
    const shapes = Object.values(c.inputs).map((t) => t.shape);
    for (const spec of op.attrs) {
      if (spec.required || rng.chance(0.4)) attrs[spec.name] = genAttrValue(rng, spec, shapes, 0.1);
    }
    c.program.push([out, op.name, ...args, ...(Object.keys(attrs).length > 0 ? [attrs] : [])]);
    c.output = out;
  }],
  // another op with as many inputs, the same arguments and attributes
  [2, (rng, c, catalogue) => {
    const st = rng.pick(c.program);
    const arity = st.filter((a, i) => i >= 2 && (typeof a === 'string' || a === null || Array.isArray(a))).length;
    const same = catalogue.filter((o) => (o.variadic ? 1 : o.inputs.length) === arity);
    if (same.length > 0) st[1] = rng.pick(same).name;
  }],
  // a huge integer in an attribute list: sizes, begins and multiples that overflow
  [2, (rng, c) => {
    const st = rng.pick(c.program);
    const attrs = st[st.length - 1];
    if (attrs === null || typeof attrs !== 'object' || Array.isArray(attrs)) return;
    const key = rng.pick(Object.keys(attrs));
    if (key === undefined) return;
    const v = attrs[key];
    if (!Array.isArray(v) || v.length === 0) {
      attrs[key] = hostileInt(rng);
      return;
    }
    const k = rng.int(0, v.length - 1);
    if (Array.isArray(v[k])) v[k][rng.int(0, Math.max(0, v[k].length - 1))] = hostileInt(rng); // a matrix row
    else v[k] = hostileInt(rng);
  }],
  // differentiate, or not; a cotangent of another shape
  [2, (rng, c) => {
    const floats = Object.keys(c.inputs).filter((n) => c.inputs[n].dtype.startsWith('float'));
    if (c.wrt && rng.chance(0.4)) {
      delete c.wrt;
      delete c.sens;
    } else if (floats.length > 0) {
      c.wrt = [rng.pick(floats)];
      if (rng.chance(0.5)) c.sens = genTensor(rng, { shape: smallShape(rng), dtype: 'float32', hostile: false });
    }
  }],
  [1, (rng, c) => {
    c.dtype = rng.pick(['float32', 'float64']);
  }],
];

/** A case mutated from one of the shared vectors (1-3 mutations); `expected` is the outcomes mode's filler. */
export function mutateCase(rng, catalogue, name) {
  const source = rng.pick(vectorCorpus());
  const c = { name, dtype: source.dtype, inputs: clone(source.inputs), program: clone(source.program) };
  c.output = source.output;
  if (source.wrt) c.wrt = [...source.wrt];
  if (source.sens) c.sens = clone(source.sens);
  const count = rng.weighted([[6, 1], [3, 2], [1, 3]]);
  for (let i = 0; i < count; ++i) rng.weighted(MUTATIONS.map(([w, m]) => [w, () => m]))(rng, c, catalogue);
  // Names a mutation made unreachable would be reading errors, not what this case is about.
  if (c.wrt) c.wrt = c.wrt.filter((n) => c.inputs[n]?.dtype?.startsWith('float'));
  if (c.wrt?.length === 0) {
    delete c.wrt;
    delete c.sens;
  }
  c.expected = { error: 'value' };
  return c;
}
