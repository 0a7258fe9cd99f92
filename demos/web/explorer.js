import { loadBprop, fmt, LinePlot, COLORS } from './common.js';
import { parse, build, toCode } from './expr.js';

const $ = (id) => document.getElementById(id);
const NAMES = ['f', 'f′', 'f″', 'f‴'];
const bp = await loadBprop();

const plot = new LinePlot($('plot'), { onHover: hover });
let current = null; // { xs, ys: [f, d1, d2, d3] }

/** f and its derivatives as functions of a tensor of points: each is grad of the sum of the one before. */
function derivatives(f) {
  const d1 = bp.grad((x) => f(x).sum());
  const d2 = bp.grad((x) => d1(x).sum());
  const d3 = bp.grad((x) => d2(x).sum());
  return [f, d1, d2, d3];
}

function codeFor(src, body, lo, hi, n) {
  return `import { init } from 'bprop';
const bp = await init();

// f(x) = ${src}
const f = (x) => ${body};

// Each derivative is the gradient of the sum of the one before: f is elementwise, so
// d/dx_i sum_j g(x_j) = g'(x_i), and one backward pass gives the derivative at every point.
const df   = bp.grad((x) => f(x).sum());
const d2f  = bp.grad((x) => df(x).sum());   // differentiates the backward ops df ran
const d3f  = bp.grad((x) => d2f(x).sum());

const xs = bp.linspace(${lo}, ${hi}, ${n}, { dtype: 'float64' });
const [y, dy, d2y, d3y] = [f, df, d2f, d3f].map((g) => g(xs).dataSync());`;
}

function evaluate(fns, values) {
  return bp.tidy(() => {
    const x = bp.tensor(values, { dtype: 'float64' });
    return fns.map((g) => {
      try {
        return Array.from(g(x).dataSync());
      } catch (e) {
        return { error: e };
      }
    });
  });
}

function setMessage(text, cls = 'muted') {
  $('message').textContent = text || '\u00a0';
  $('message').className = cls;
}

function update() {
  document.body.dataset.ready = '0';
  const src = $('expr').value;
  let tree;
  try {
    tree = parse(src);
  } catch (e) {
    setMessage(`Cannot parse “${src}”: ${e.message}`, 'error');
    $('message').dataset.kind = 'parse-error';
    for (const k of ['r-f', 'r-d1', 'r-d2', 'r-d3']) $(k).textContent = '—';
    document.body.dataset.ready = '1';
    return;
  }
  const lo = Number($('xmin').value);
  const hi = Number($('xmax').value);
  const n = Math.max(2, Math.min(20000, Math.round(Number($('npts').value)) || 400));
  if (!(hi > lo)) {
    setMessage('The range needs “from” < “to”.', 'error');
    $('message').dataset.kind = 'range-error';
    document.body.dataset.ready = '1';
    return;
  }
  const f = build(tree, bp);
  const fns = derivatives(f);
  const xs = Array.from({ length: n }, (_, i) => lo + ((hi - lo) * i) / (n - 1));
  const t0 = performance.now();
  const ys = evaluate(fns, xs);
  const ms = performance.now() - t0;
  const failed = ys.find((y) => !Array.isArray(y));
  if (failed) {
    setMessage(`bprop could not evaluate it: ${failed.error.message}`, 'error');
    $('message').dataset.kind = 'eval-error';
    document.body.dataset.ready = '1';
    return;
  }
  current = { xs, ys, fns };
  setMessage(`f(x) = ${src}`, 'ok');
  $('message').dataset.kind = 'ok';
  plot.setData(xs, ys.map((y, i) => ({ name: NAMES[i], color: COLORS[i], ys: y, width: i === 0 ? 2.5 : 1.8, dash: i === 3 ? [5, 3] : [] })));
  $('timing').textContent = `${n} points, f and 3 derivatives in ${ms.toFixed(1)} ms`;
  $('code').textContent = codeFor(src, toCode(tree), lo, hi, n);
  readPoint();
  document.body.dataset.ready = '1';
}

function readPoint() {
  if (!current) return;
  const x0 = Number($('x0').value);
  const vals = evaluate(current.fns, [x0]);
  ['r-f', 'r-d1', 'r-d2', 'r-d3'].forEach((id, i) => {
    const v = Array.isArray(vals[i]) ? vals[i][0] : NaN;
    $(id).textContent = fmt(v, 8);
    $(id).dataset.value = String(v);
  });
}

function hover(i) {
  if (!current || i < 0) {
    $('hover').textContent = 'Move the mouse over the plot to read the values.';
    return;
  }
  $('hover').textContent = `x = ${fmt(current.xs[i], 5)}:  ` + current.ys.map((y, k) => `${NAMES[k]} = ${fmt(y[i], 5)}`).join(',  ');
}

$('legend').innerHTML = NAMES.map((n, i) => `<span style="--c:${COLORS[i]}">${n}(x)</span>`).join('');
let timer = null;
const schedule = () => {
  document.body.dataset.ready = '0';
  clearTimeout(timer);
  timer = setTimeout(update, 150);
};
for (const id of ['expr', 'xmin', 'xmax', 'npts']) $(id).addEventListener('input', schedule);
$('x0').addEventListener('input', readPoint);
for (const a of document.querySelectorAll('[data-ex]')) {
  a.addEventListener('click', (ev) => {
    ev.preventDefault();
    $('expr').value = a.dataset.ex;
    update();
  });
}
update();
