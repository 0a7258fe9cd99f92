// The custom backward operator page: the user's bprop, used either by a bp.Cell subclass (MindSpore's Cell.bprop)
// or by a primitive registered with bp.registerPrimitive (MindSpore's Primitive + bprop_getters), against the
// automatic gradient of the same function, with the JavaScript that ran and the MindSpore Python it corresponds to.
import { loadBprop, fmt, LinePlot, COLORS } from './common.js';
import { pythonReturn } from './py-trace.js';

const $ = (id) => document.getElementById(id);
const bp = await loadBprop();

// Each example: the operator's forward (as built-in ops for the cell and the automatic gradient, and as a kernel on
// typed arrays for the primitive), what follows it in the loss, and a bprop to start from.
const PRESETS = {
  clip: {
    title: 'Gradient clipping',
    doc: 'The operator is the identity going forward; its bprop clips the gradient flowing back to [-1, 1]. The loss after it is L = y³/3, so dout = y² and the automatic gradient is x².',
    construct: (x) => x.identity(),
    constructJs: 'x.identity()',
    constructPy: 'x',
    prim: 'clip_grad',
    pyClass: 'ClipGrad',
    forwardJs: '(x) => x',
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
    prim: 'round_ste',
    pyClass: 'RoundSTE',
    // Halves to even, as the built-in round (and NumPy) do.
    forwardJs: '(x) => x.map((v) => (v - Math.floor(v) === 0.5 ? 2 * Math.round(v / 2) : Math.round(v)))',
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
    prim: 'my_tanh',
    pyClass: 'MyTanh',
    forwardJs: '(x) => x.map(Math.tanh)',
    after: (y) => y,
    afterJs: 'y',
    afterPy: 'y',
    bprop: '(x, out, dout) => [dout.mul(out.square().neg().add(1))]',
    range: [-3, 3],
  },
};

const MODES = {
  cell: { title: 'Cell with bprop', js: 'The cell in JavaScript' },
  primitive: { title: 'registered primitive', js: 'The primitive in JavaScript' },
};

const plot = new LinePlot($('plot'), { onHover: hover });
let state = null;
// Registered primitives by preset and bprop source: a name can be registered once, so every new bprop gets a new
// name (clip_grad_v1, clip_grad_v2, ...) and applying a source again reuses the primitive made for it.
const registered = new Map();
const versions = new Map();

for (const [k, p] of Object.entries(PRESETS)) $('preset').add(new Option(p.title, k));
for (const [k, m] of Object.entries(MODES)) $('mode').add(new Option(m.title, k));
$('legend').innerHTML = [['L(x)', COLORS[0]], ['automatic dL/dx', COLORS[2]], ['custom dL/dx', COLORS[1]]]
  .map(([n, c]) => `<span style="--c:${c}">${n}</span>`).join('');

/** JavaScript source of a function as a function; throws SyntaxError for bad code. */
function compile(src, what) {
  const f = new Function('bp', `"use strict"; return (${src}\n);`)(bp);
  if (typeof f !== 'function') throw new TypeError(`the ${what} must be a function`);
  return f;
}

const inferShape = (xShape) => xShape;
const inferDtype = (xDtype) => xDtype;

/** The primitive for this preset and bprop source: { name, fresh }, registering it when it is new. */
function primitiveFor(key, p, src, bpropFn) {
  const id = `${key}\n${src}`;
  if (registered.has(id)) return { name: registered.get(id), fresh: false };
  let v = versions.get(key) ?? 0;
  let name;
  do name = `${p.prim}_v${++v}`; while (name in bp.ops);
  versions.set(key, v);
  bp.registerPrimitive({
    name,
    inputs: ['x'],
    inferShape,
    inferDtype,
    forward: compile(p.forwardJs, 'forward'),
    bprop: bpropFn,
  });
  registered.set(id, name);
  return { name, fresh: true };
}

function pythonUse(p, make, call) {
  return `${make}
def loss(x):
    y = ${call}(x)
    return ${p.afterPy}

grad_fn = ms.grad(loss)          # ${call === 'custom' ? 'uses Custom.bprop instead of differentiating construct' : `calls the bprop registered for ${p.pyClass}`}
dx = grad_fn(ms.Tensor([${Number($('x0').value)}], ms.float64))`;
}

/** The MindSpore code: construct or primitive is the example's, bprop the user's, translated by the tracer. */
function pythonFor(p, mode, bpropFn) {
  const body = pythonReturn(bpropFn);
  if (mode === 'cell') {
    return `import mindspore as ms
from mindspore import nn, ops

class Custom(nn.Cell):
    def construct(self, x):
        return ${p.constructPy}

    def bprop(self, x, out, dout):
        ${body}

${pythonUse(p, 'custom = Custom()', 'custom')}`;
  }
  const fn = p.prim;
  return `import mindspore as ms
from mindspore import ops
from mindspore.ops.primitive import PrimitiveWithInfer, prim_attr_register
from mindspore.ops._grad.grad_base import bprop_getters

class ${p.pyClass}(PrimitiveWithInfer):
    """y = ${p.constructPy}; the kernel registered under this name computes it."""
    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=['x'], outputs=['output'])

    def infer_shape(self, x_shape):
        return x_shape

    def infer_dtype(self, x_dtype):
        return x_dtype

@bprop_getters.register(${p.pyClass})
def get_bprop_${fn}(self):
    def bprop(x, out, dout):
        ${body}
    return bprop

${pythonUse(p, `${fn} = ${p.pyClass}()`, fn)}`;
}

function autoJs(p) {
  return `// the automatic gradient differentiates the built-in ops:
const autoGrad = bp.grad((x) => { const y = ${p.constructJs}; return (${p.afterJs}).sum(); });`;
}

function jsFor(p, mode, src, prim) {
  if (mode === 'cell') {
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
${autoJs(p)}`;
  }
  return `// A name can be registered once (a second registerPrimitive throws ValueError),
// so each version of the bprop is registered under a new name.
bp.registerPrimitive({
  name: '${prim.name}',
  inputs: ['x'],
  inferShape: ${inferShape.toString()},
  inferDtype: ${inferDtype.toString()},
  forward: ${p.forwardJs},   // on a copy of x's elements
  bprop: ${src},
});
const loss = (x) => { const y = bp.ops.${prim.name}(x); return ${p.afterJs}; };
const customGrad = bp.grad((x) => loss(x).sum());
${autoJs(p)}`;
}

function setMessage(text, kind) {
  $('message').textContent = text || '\u00a0';
  $('message').className = kind;
  $('message').dataset.kind = kind;
}

function fail(text) {
  setMessage(text, 'error');
  document.body.dataset.ready = '1';
}

function apply() {
  document.body.dataset.ready = '0';
  const key = $('preset').value;
  const p = PRESETS[key];
  const mode = $('mode').value;
  const src = $('bprop').value.trim();
  let bpropFn;
  try {
    bpropFn = compile(src, 'bprop (x, out, dout) => [dx]');
  } catch (e) {
    fail(`Cannot use this bprop: ${e.message}`);
    return;
  }
  let op;
  let prim = null;
  if (mode === 'cell') {
    class Custom extends bp.Cell {
      construct(x) {
        return p.construct(x);
      }
      bprop(x, out, dout) {
        return bpropFn(x, out, dout);
      }
    }
    op = new Custom();
  } else {
    try {
      prim = primitiveFor(key, p, src, bpropFn);
    } catch (e) {
      fail(`Cannot register this primitive: ${e.message}`);
      return;
    }
    op = bp.ops[prim.name];
  }
  const lossCustom = (x) => p.after(op(x));
  const fns = {
    f: lossCustom,
    auto: bp.grad((x) => p.after(p.construct(x)).sum()),
    custom: bp.grad((x) => lossCustom(x).sum()),
  };
  const [lo, hi] = p.range;
  const n = 401;
  const xs = Array.from({ length: n }, (_, i) => lo + ((hi - lo) * i) / (n - 1));
  let ys;
  try {
    ys = evaluate(fns, xs);
  } catch (e) {
    fail(`The bprop failed: ${e.message}`);
    return;
  }
  state = { p, fns, xs, ys };
  setMessage(prim ? `Applied: ${prim.fresh ? 'registered' : 'reusing'} the primitive ${prim.name}.` : 'Applied.', 'ok');
  document.body.dataset.primitive = prim ? prim.name : '';
  plot.setData(xs, [
    { name: 'L', color: COLORS[0], ys: ys.f, width: 2.5 },
    { name: 'auto', color: COLORS[2], ys: ys.auto, width: 2, dash: [6, 4] },
    { name: 'custom', color: COLORS[1], ys: ys.custom, width: 2 },
  ]);
  $('js-title').textContent = MODES[mode].js;
  $('jscode').textContent = jsFor(p, mode, src, prim);
  $('pycode').textContent = pythonFor(p, mode, bpropFn);
  readPoint();
  document.body.dataset.ready = '1';
}

function evaluate(fns, values) {
  return bp.tidy(() => {
    const x = bp.tensor(values, { dtype: 'float64' });
    return Object.fromEntries(Object.entries(fns).map(([k, g]) => [k, Array.from(g(x).dataSync())]));
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
$('mode').addEventListener('change', apply); // the bprop being edited carries over to the other way
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
