import { loadBprop, fmt, LinePlot, COLORS } from './common.js';

const $ = (id) => document.getElementById(id);
const bp = await loadBprop();

// Each example: a cell (construct, in JS and Python), what follows it in the loss, and a bprop to start from.
const PRESETS = {
  clip: {
    title: 'Gradient clipping',
    doc: 'The cell is the identity going forward; its bprop clips the gradient flowing back to [-1, 1]. The loss after it is L = y³/3, so dout = y² and the automatic gradient is x².',
    construct: (x) => x.identity(),
    constructJs: 'x.identity()',
    constructPy: 'x',
    after: (y) => y.square().mul(y).div(3),
    afterJs: 'y.square().mul(y).div(3)',
    afterPy: 'y ** 3 / 3',
    bprop: '(x, out, dout) => [dout.clamp({ min: -1, max: 1 })]',
    range: [-2.5, 2.5],
  },
  ste: {
    title: 'Straight-through estimator for round',
    doc: 'round has a zero gradient almost everywhere, so nothing would train through it. The straight-through estimator passes dout through unchanged, as if round were the identity.',
    construct: (x) => x.round(),
    constructJs: 'x.round()',
    constructPy: 'ops.round(x)',
    after: (y) => y.mul(y).div(2),
    afterJs: 'y.mul(y).div(2)',
    afterPy: 'y * y / 2',
    bprop: '(x, out, dout) => [dout]',
    range: [-3, 3],
  },
  tanh: {
    title: 'tanh with its own bprop',
    doc: 'The bprop of tanh written out: d tanh(x)/dx = 1 - out². Change it (try dout.mul(0.5)) and the red curve leaves the green one.',
    construct: (x) => x.tanh(),
    constructJs: 'x.tanh()',
    constructPy: 'ops.tanh(x)',
    after: (y) => y,
    afterJs: 'y',
    afterPy: 'y',
    bprop: '(x, out, dout) => [dout.mul(out.square().neg().add(1))]',
    range: [-3, 3],
  },
};

const plot = new LinePlot($('plot'), { onHover: hover });
let state = null;

for (const [k, p] of Object.entries(PRESETS)) $('preset').add(new Option(p.title, k));
$('legend').innerHTML = [['L(x)', COLORS[0]], ['automatic dL/dx', COLORS[2]], ['custom dL/dx', COLORS[1]]]
  .map(([n, c]) => `<span style="--c:${c}">${n}</span>`).join('');

/** The user's bprop source as a function; throws SyntaxError for bad code. */
function compileBprop(src) {
  const f = new Function('bp', `"use strict"; return (${src}\n);`)(bp);
  if (typeof f !== 'function') throw new TypeError('the bprop must be a function (x, out, dout) => [dx]');
  return f;
}

/** The MindSpore cell: construct is the example's, bprop the user's, translated by running it on symbols. */
function pythonFor(p, bpropFn) {
  let body;
  try {
    const r = bpropFn(sym('x'), sym('out'), sym('dout'));
    const list = Array.isArray(r) ? r : [r];
    body = `return (${list.map((v) => (v === null ? 'None' : pyOf(v))).join(', ')},)`;
  } catch {
    body = '# (this bprop has no direct translation)';
  }
  return `import mindspore as ms
from mindspore import nn, ops

class Custom(nn.Cell):
    def construct(self, x):
        return ${p.constructPy}

    def bprop(self, x, out, dout):
        ${body}

custom = Custom()
def loss(x):
    y = custom(x)
    return ${p.afterPy}

grad_fn = ms.grad(loss)          # uses Custom.bprop instead of differentiating construct
dx = grad_fn(ms.Tensor([${Number($('x0').value)}], ms.float64))`;
}

// ---- a tiny tracer: runs a bprop on symbols to print it as MindSpore Python ----
const PY_INFIX = { add: '+', sub: '-', mul: '*', div: '/', pow: '**' };
const SYM = Symbol('py');
function pyArg(a) {
  if (a && a[SYM]) return a[SYM];
  if (typeof a === 'number') return String(a);
  if (a === null) return 'None';
  if (typeof a === 'object' && !Array.isArray(a)) {
    return Object.entries(a).map(([k, v]) => `${k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}=${pyArg(v)}`).join(', ');
  }
  if (Array.isArray(a)) return `(${a.map(pyArg).join(', ')})`;
  throw new TypeError('untranslatable argument');
}
function pyOp(name, self, args) {
  if (PY_INFIX[name] && args.length === 1) return `(${pyArg(self)} ${PY_INFIX[name]} ${pyArg(args[0])})`;
  if (name === 'neg') return `(-${pyArg(self)})`;
  const snake = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  return `ops.${snake}(${[self, ...args].map(pyArg).join(', ')})`;
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

function jsFor(p, src) {
  return `class Custom extends bp.Cell {
  construct(x) {
    return ${p.constructJs};
  }
  bprop(x, out, dout) {
    return (${src})(x, out, dout);
  }
}
const custom = new Custom();
const loss = (x) => { const y = custom(x); return ${p.afterJs}; };
const customGrad = bp.grad((x) => loss(x).sum());
// the automatic gradient differentiates construct itself:
const autoGrad = bp.grad((x) => { const y = ${p.constructJs}; return (${p.afterJs}).sum(); });`;
}

function setMessage(text, cls) {
  $('message').textContent = text || '\u00a0';
  $('message').className = cls;
}

function apply() {
  document.body.dataset.ready = '0';
  const p = PRESETS[$('preset').value];
  const src = $('bprop').value.trim();
  let bpropFn;
  try {
    bpropFn = compileBprop(src);
  } catch (e) {
    setMessage(`Cannot use this bprop: ${e.message}`, 'error');
    $('message').dataset.kind = 'error';
    document.body.dataset.ready = '1';
    return;
  }
  class Custom extends bp.Cell {
    construct(x) {
      return p.construct(x);
    }
    bprop(x, out, dout) {
      return bpropFn(x, out, dout);
    }
  }
  const custom = new Custom();
  const lossCustom = (x) => p.after(custom(x));
  const lossAuto = (x) => p.after(p.construct(x));
  const fns = {
    f: (x) => lossAuto(x),
    auto: bp.grad((x) => lossAuto(x).sum()),
    custom: bp.grad((x) => lossCustom(x).sum()),
  };
  const [lo, hi] = p.range;
  const n = 401;
  const xs = Array.from({ length: n }, (_, i) => lo + ((hi - lo) * i) / (n - 1));
  let ys;
  try {
    ys = evaluate(fns, xs);
  } catch (e) {
    setMessage(`The bprop failed: ${e.message}`, 'error');
    $('message').dataset.kind = 'error';
    document.body.dataset.ready = '1';
    return;
  }
  state = { p, fns, xs, ys };
  setMessage('Applied.', 'ok');
  $('message').dataset.kind = 'ok';
  plot.setData(xs, [
    { name: 'L', color: COLORS[0], ys: ys.f, width: 2.5 },
    { name: 'auto', color: COLORS[2], ys: ys.auto, width: 2, dash: [6, 4] },
    { name: 'custom', color: COLORS[1], ys: ys.custom, width: 2 },
  ]);
  $('jscode').textContent = jsFor(p, src);
  $('pycode').textContent = pythonFor(p, bpropFn);
  readPoint();
  document.body.dataset.ready = '1';
}

function evaluate(fns, values) {
  return bp.tidy(() => {
    const x = bp.tensor(values, { dtype: 'float64' });
    return Object.fromEntries(Object.entries(fns).map(([k, g]) => [k, Array.from(g(x).data())]));
  });
}

function readPoint() {
  if (!state) return;
  const x0 = Number($('x0').value);
  let v;
  try {
    v = evaluate(state.fns, [x0]);
  } catch (e) {
    setMessage(`The bprop failed: ${e.message}`, 'error');
    return;
  }
  for (const [id, k] of [['r-f', 'f'], ['r-auto', 'auto'], ['r-custom', 'custom']]) {
    $(id).textContent = fmt(v[k][0], 8);
    $(id).dataset.value = String(v[k][0]);
  }
  $('pycode').textContent = $('pycode').textContent.replace(/ms\.Tensor\(\[[^\]]*\]/, `ms.Tensor([${x0}]`);
}

function hover(i) {
  if (!state || i < 0) {
    $('hover').textContent = 'Move the mouse over the plot to read the values.';
    return;
  }
  $('hover').textContent = `x = ${fmt(state.xs[i], 5)}:  L = ${fmt(state.ys.f[i], 5)},  automatic = ${fmt(state.ys.auto[i], 5)},  custom = ${fmt(state.ys.custom[i], 5)}`;
}

function loadPreset() {
  const p = PRESETS[$('preset').value];
  $('bprop').value = p.bprop;
  $('preset-doc').textContent = p.doc;
  apply();
}

$('preset').addEventListener('change', loadPreset);
$('restore').addEventListener('click', loadPreset);
$('apply').addEventListener('click', apply);
let timer = null;
$('bprop').addEventListener('input', () => {
  document.body.dataset.ready = '0';
  clearTimeout(timer);
  timer = setTimeout(apply, 400);
});
$('x0').addEventListener('input', readPoint);
loadPreset();
