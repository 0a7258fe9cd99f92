// Prints a JavaScript bprop as MindSpore Python: runs it on symbols that record each op called on them
// (x.mul(y) -> (x * y), dout.clamp({ min: -1 }) -> ops.clamp(dout, min=-1)) and returns the Python
// `return (...,)` line, or a comment when the bprop does something the tracer cannot follow.

const PY_INFIX = { add: '+', sub: '-', mul: '*', div: '/', pow: '**' };
const SYM = Symbol('py');

const snake = (name) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function pyArg(a) {
  if (a && a[SYM]) return a[SYM];
  if (typeof a === 'number') return String(a);
  if (a === null) return 'None';
  if (typeof a === 'object' && !Array.isArray(a)) {
    return Object.entries(a).map(([k, v]) => `${snake(k)}=${pyArg(v)}`).join(', ');
  }
  if (Array.isArray(a)) return `(${a.map(pyArg).join(', ')})`;
  throw new TypeError('untranslatable argument');
}

function pyOp(name, self, args) {
  if (PY_INFIX[name] && args.length === 1) return `(${pyArg(self)} ${PY_INFIX[name]} ${pyArg(args[0])})`;
  if (name === 'neg') return `(-${pyArg(self)})`;
  return `ops.${snake(name)}(${[self, ...args].map(pyArg).join(', ')})`;
}

function sym(expr) {
  const target = { [SYM]: expr };
  return new Proxy(target, {
    get(t, prop) {
      if (prop === SYM) return t[SYM];
      if (typeof prop !== 'string') return undefined;
      return (...args) => sym(pyOp(prop, sym(t[SYM]), args));
    },
  });
}

function pyOf(v) {
  if (v && v[SYM]) {
    const s = v[SYM];
    return s.startsWith('(') && s.endsWith(')') ? s.slice(1, -1) : s;
  }
  throw new TypeError('not a tensor');
}

/** The Python return line of bpropFn(x, out, dout). */
export function pythonReturn(bpropFn) {
  try {
    const r = bpropFn(sym('x'), sym('out'), sym('dout'));
    const list = Array.isArray(r) ? r : [r];
    return `return (${list.map((v) => (v === null ? 'None' : pyOf(v))).join(', ')},)`;
  } catch {
    return '# (this bprop has no direct translation)';
  }
}
