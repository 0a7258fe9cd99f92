import dagre from '/node_modules/@dagrejs/dagre/dist/dagre.esm.js';
import { loadBprop, fmt } from './common.js';
import { parse, build, toCode } from './expr.js';
import { buildJitModel, drawJitModel } from './jit-graph.js';
import { nodeElement } from './svg-node.js';

const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';
const bp = await loadBprop();

let model = null; // { graph, nodes: Map, edges: [], steps }
let current = -1; // -1: forward only; steps.length: whole backward pass done

// ---- what to differentiate ----------------------------------------------------------------------------------

function expressionCase() {
  const src = $('expr').value;
  const tree = parse(src);
  const f = build(tree, bp);
  const x0 = Number($('x0').value);
  const body = toCode(tree);
  return {
    fn: (x) => f(x),
    inputs: () => [bp.tensor(x0, { dtype: 'float64' })],
    names: ['x'],
    code: `const f = (x) => ${body};   // f(x) = ${src}
const graph = bp.exportGraph(f, [bp.tensor(${x0}, { dtype: 'float64' })], { names: ['x'] });
// graph.forward: the ops f ran; graph.backward: one step per op, output first:
//   { op, dout, ops: the ops its bprop ran, grads }
// graph.grads: df/dx, the same value bp.grad(f)(x) returns.`,
  };
}

function networkCase() {
  const fn = (x, w1, b1, w2, b2, y) => x.matmul(w1).add(b1).tanh().matmul(w2).add(b2).sub(y).square().mean();
  return {
    fn,
    inputs: () => [
      bp.tensor([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]], { dtype: 'float32' }),
      bp.randn([3, 4], { seed: 1 }).mul(0.5),
      bp.zeros([4]),
      bp.randn([4, 1], { seed: 2 }).mul(0.5),
      bp.zeros([1]),
      bp.tensor([[1.0], [0.0]]),
    ],
    names: ['x', 'W1', 'b1', 'W2', 'b2', 'y'],
    code: `// A two-layer network and its squared error on a batch of 2 samples with 3 features.
const loss = (x, W1, b1, W2, b2, y) =>
  x.matmul(W1).add(b1).tanh().matmul(W2).add(b2).sub(y).square().mean();
const graph = bp.exportGraph(loss, [x, W1, b1, W2, b2, y], { names: ['x', 'W1', 'b1', 'W2', 'b2', 'y'] });
// MindSpore: grad_fn = ops.GradOperation(get_all=True)(net); each op's bprop is looked up
// in the registry (e.g. matmul: dx = dout @ W^T, dW = x^T @ dout) and chained back.`,
  };
}

// ---- graph model --------------------------------------------------------------------------------------------

function tensorText(t) {
  if (!t) return '';
  const shape = `(${t.shape.join(', ')}${t.shape.length === 1 ? ',' : ''})`;
  const vals = t.values.map((v) => (typeof v === 'number' ? fmt(v, 5) : String(v)));
  const body = t.shape.length === 0 ? vals[0] : `[${vals.join(', ')}${t.truncated ? ', …' : ''}]`;
  return `${t.name ? t.name + ' ' : ''}${t.dtype}${shape}\n${body}`;
}
/** " = v" for a scalar, the shape otherwise (tensor references in the step panel). */
function brief(t) {
  if (!t) return '';
  return t.shape.length === 0 ? ` = ${fmt(t.values[0], 4)}` : `(${t.shape.join('×')})`;
}
function shapeText(t) {
  if (!t) return '';
  return t.shape.length === 0 ? `= ${fmt(t.values[0], 4)}` : `(${t.shape.join('×')})`;
}

function buildModel(graph) {
  const T = new Map(graph.tensors.map((t) => [t.id, t]));
  const nodes = new Map();
  const edges = [];
  const producer = new Map(); // tensor id -> node id (forward values)
  const gradProducer = new Map(); // tensor id -> node id (backward values)
  const addNode = (id, kind, label, sub, tooltip, extra = {}) => {
    nodes.set(id, { id, kind, label, sub, tooltip, ...extra });
  };
  for (const inp of graph.inputs) {
    const t = T.get(inp.tensor);
    addNode(`t${inp.tensor}`, 'input', inp.name, shapeText(t), tensorText(t));
    producer.set(inp.tensor, `t${inp.tensor}`);
  }
  graph.forward.forEach((op, i) => {
    const id = `f${op.index ?? i}`;
    const out = T.get(op.output);
    addNode(id, 'fwd', op.op, shapeText(out), `forward op #${op.index ?? i}: ${op.op}${attrText(op.attrs)}\nout: ${tensorText(out)}`);
    op.inputs.forEach((tid, k) => {
      if (tid === null) return;
      let src = producer.get(tid);
      if (!src) {
        src = `c${tid}`;
        const t = T.get(tid);
        if (!nodes.has(src)) addNode(src, 'const', t && t.shape.length === 0 ? fmt(t.values[0], 4) : 'const', t ? shapeText(t) : '', tensorText(t));
        producer.set(tid, src);
      }
      edges.push({ from: src, to: id, kind: 'fwd', label: op.inputs.length > 1 ? String(k) : '' });
    });
    producer.set(op.output, id);
  });
  // The backward pass starts from a cotangent of ones for the output.
  const seedTensor = graph.backward.length ? graph.backward[0].dout : null;
  const outNode = producer.get(graph.output);
  addNode('seed', 'seed', 'dout', seedTensor !== null ? shapeText(T.get(seedTensor)) : '', `the cotangent of the output (ones)\n${tensorText(T.get(seedTensor))}`);
  if (outNode) edges.push({ from: outNode, to: 'seed', kind: 'fwd', label: 'output' });
  if (seedTensor !== null) gradProducer.set(seedTensor, 'seed');

  const steps = graph.backward.map((s) => {
    const id = `b${s.step}`;
    const fwdOp = graph.forward.find((o, i) => (o.index ?? i) === s.forward);
    const ref = (tid) => (tid === null ? 'None' : `%${tid}${brief(T.get(tid))}`);
    const opsText = s.ops.map((o) => `${o.op}(${o.inputs.map(ref).join(', ')}) -> ${ref(o.output)}`);
    addNode(id, 'bwd', `bprop ${s.op}`, s.ops.map((o) => o.op).join(', ') || '(no ops)', `backward step ${s.step}: the bprop of forward op #${s.forward} (${s.op})\ndout: ${tensorText(T.get(s.dout))}\nran: ${opsText.join('\n     ') || 'nothing'}`, { step: s.step });
    const src = gradProducer.get(s.dout) ?? 'seed';
    edges.push({ from: src, to: id, kind: 'bwd', label: 'dout', step: s.step });
    s.grads.forEach((g) => {
      if (g !== null) gradProducer.set(g, id);
    });
    s.accumulate.forEach((a, k) => {
      const aid = `a${s.step}_${k}`;
      addNode(aid, 'acc', a.op, shapeText(T.get(a.output)), `gradient accumulation after step ${s.step}: ${a.op}\n${tensorText(T.get(a.output))}`, { step: s.step });
      for (const tid of a.inputs) {
        if (tid === null) continue;
        const from = gradProducer.get(tid);
        if (from) edges.push({ from, to: aid, kind: 'bwd', label: '', step: s.step });
      }
      gradProducer.set(a.output, aid);
    });
    return { ...s, id, fwdId: fwdOp ? `f${fwdOp.index ?? s.forward}` : null, opsText };
  });
  for (const g of graph.grads) {
    const name = graph.inputs.find((i) => i.tensor === g.input)?.name ?? `%${g.input}`;
    const id = `g${g.input}`;
    const t = T.get(g.tensor);
    addNode(id, 'grad', `d/d${name}`, shapeText(t), `gradient of the output with respect to ${name}\n${tensorText(t)}`);
    const from = gradProducer.get(g.tensor);
    if (from) {
      const lastStep = Math.max(-1, ...steps.filter((s) => s.id === from || from.startsWith(`a${s.step}_`)).map((s) => s.step));
      edges.push({ from, to: id, kind: 'bwd', label: '', step: lastStep });
    }
  }
  return { graph, T, nodes, edges, steps };
}

function attrText(attrs) {
  const e = Object.entries(attrs ?? {});
  return e.length ? ` {${e.map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(', ')}}` : '';
}

// ---- layout and drawing -------------------------------------------------------------------------------------

function textWidth(s, px) {
  return s.length * px * 0.62;
}

function draw() {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: 'TB', nodesep: 26, ranksep: 36, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of model.nodes.values()) {
    const w = Math.max(70, textWidth(n.label, 12), textWidth(n.sub ?? '', 10.5)) + 22;
    g.setNode(n.id, { width: Math.min(w, 260), height: n.sub ? 40 : 28 });
  }
  model.edges.forEach((e, i) => g.setEdge(e.from, e.to, { weight: e.kind === 'fwd' ? 2 : 1 }, `e${i}`));
  dagre.layout(g);
  const { width, height } = g.graph();
  const svg = document.createElementNS(SVG, 'svg');
  // Small graphs are drawn larger; the box scrolls for big ones.
  const scale = Math.max(1, Math.min(1.5, ($('graph').clientWidth - 4) / width));
  svg.setAttribute('width', width * scale);
  svg.setAttribute('height', height * scale);
  svg.style.margin = '0 auto';
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  const defs = document.createElementNS(SVG, 'defs');
  defs.innerHTML = `<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#7d8896"/></marker>
<marker id="arrow-b" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#d2452b"/></marker>`;
  svg.appendChild(defs);
  model.edges.forEach((e, i) => {
    const pts = g.edge({ v: e.from, w: e.to, name: `e${i}` }).points;
    const grp = document.createElementNS(SVG, 'g');
    grp.setAttribute('class', `edge ${e.kind}`);
    const path = document.createElementNS(SVG, 'path');
    path.setAttribute('d', pts.map((p, k) => `${k ? 'L' : 'M'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' '));
    path.setAttribute('marker-end', `url(#${e.kind === 'bwd' ? 'arrow-b' : 'arrow'})`);
    grp.appendChild(path);
    if (e.label) {
      const mid = pts[Math.floor(pts.length / 2)];
      const t = document.createElementNS(SVG, 'text');
      t.setAttribute('x', mid.x + 4);
      t.setAttribute('y', mid.y - 3);
      t.textContent = e.label;
      grp.appendChild(t);
    }
    e.el = grp;
    svg.appendChild(grp);
  });
  for (const n of model.nodes.values()) {
    n.el = nodeElement(n, g.node(n.id), showTip, hideTip);
    svg.appendChild(n.el);
  }
  $('graph').replaceChildren(svg);
}

function showTip(ev, text) {
  const tip = $('tooltip');
  tip.textContent = text;
  tip.hidden = false;
  tip.style.left = `${ev.clientX + 14}px`;
  tip.style.top = `${ev.clientY + 14}px`;
}
function hideTip() {
  $('tooltip').hidden = true;
}

// ---- step-through -------------------------------------------------------------------------------------------

function setStep(k) {
  const n = model.steps.length;
  current = Math.max(-1, Math.min(n, k));
  for (const node of model.nodes.values()) {
    node.el.classList.remove('current', 'done', 'saved');
    const s = node.step;
    if (node.kind === 'bwd' || node.kind === 'acc') {
      if (s < current) node.el.classList.add('done');
      if (s === current) node.el.classList.add(node.kind === 'bwd' ? 'current' : 'done');
      node.el.style.opacity = s <= current ? 1 : 0.35;
    }
    if (node.kind === 'grad') node.el.style.opacity = current >= n ? 1 : 0.35;
    if (node.kind === 'seed') node.el.style.opacity = current >= 0 ? 1 : 0.35;
  }
  for (const e of model.edges) {
    if (e.kind !== 'bwd') continue;
    e.el.classList.toggle('done', e.step < current || current >= n);
    e.el.classList.toggle('current', e.step === current && e.label === 'dout');
    e.el.style.opacity = e.step <= current || current >= n ? 1 : 0.3;
  }
  const items = $('steps').children;
  for (let i = 0; i < items.length; i++) {
    items[i].className = i === current ? 'current' : i < current ? 'done' : '';
  }
  const info = $('step-info');
  $('graph').dataset.current = String(current);
  if (current < 0) {
    $('step-label').textContent = `forward pass only (${model.graph.forward.length} ops); ${n} backward steps`;
    info.textContent = 'The forward pass ran and recorded its ops. Press “next step” to start the backward pass with dout = 1 at the output.';
  } else if (current >= n) {
    $('step-label').textContent = `backward pass done (${n} steps)`;
    info.textContent = model.graph.grads
      .map((g) => `d/d${model.graph.inputs.find((i) => i.tensor === g.input)?.name}: ${tensorText(model.T.get(g.tensor)).split('\n')[1]}`)
      .join('\n');
    info.style.whiteSpace = 'pre-wrap';
  } else {
    const s = model.steps[current];
    $('step-label').textContent = `step ${current + 1} of ${n}: bprop of ${s.op}`;
    model.nodes.get(s.fwdId)?.el.classList.add('saved');
    const grads = s.grads.map((gid, i) => `  grad ${i}: ${gid === null ? 'None (not needed)' : tensorText(model.T.get(gid)).split('\n')[1]}`);
    info.style.whiteSpace = 'pre-wrap';
    info.textContent =
      `bprop of forward op #${s.forward} (${s.op}) — outlined in the forward graph.\n` +
      `dout = ${tensorText(model.T.get(s.dout)).split('\n')[1]}\n` +
      `its bprop ran:\n  ${s.opsText.join('\n  ') || '(no ops)'}\n` +
      `and returned:\n${grads.join('\n')}` +
      (s.accumulate.length ? `\nthen ${s.accumulate.length} add(s) summed gradients of a value used twice.` : '');
  }
  $('prev').disabled = current < 0;
  $('next').disabled = current >= n;
}

// ---- page ---------------------------------------------------------------------------------------------------

function update() {
  document.body.dataset.ready = '0';
  const mode = document.querySelector('input[name=mode]:checked').value;
  let c;
  try {
    c = mode === 'net' ? networkCase() : expressionCase();
  } catch (e) {
    $('message').textContent = `Cannot parse “${$('expr').value}”: ${e.message}`;
    $('message').className = 'error';
    $('message').dataset.kind = 'parse-error';
    document.body.dataset.ready = '1';
    return;
  }
  const view = document.querySelector('input[name=view]:checked').value;
  if (view === 'jit' || view === 'jit-traced') {
    showJitted(c, view === 'jit');
    return;
  }
  for (const id of ['prev', 'next', 'reset', 'all']) $(id).hidden = false;
  $('info-title').textContent = 'Current step';
  $('list-title').textContent = 'Backward steps';
  delete $('graph').dataset.groups;
  let graph;
  try {
    graph = bp.tidy(() => bp.exportGraph(c.fn, c.inputs(), { names: c.names, maxValues: 8 }));
  } catch (e) {
    $('message').textContent = `bprop could not differentiate it: ${e.message}`;
    $('message').className = 'error';
    $('message').dataset.kind = 'eval-error';
    document.body.dataset.ready = '1';
    return;
  }
  model = buildModel(graph);
  $('message').textContent = `${graph.forward.length} forward ops, ${graph.backward.length} backward steps, ${graph.backward.reduce((a, s) => a + s.ops.length, 0)} backward ops`;
  $('message').className = 'ok';
  $('message').dataset.kind = 'ok';
  $('code').textContent = c.code;
  $('steps').innerHTML = '';
  for (const s of model.steps) {
    const li = document.createElement('li');
    li.textContent = `bprop ${s.op}: ${s.ops.map((o) => o.op).join(', ') || '—'}${s.accumulate.length ? ` (+ ${s.accumulate.map((a) => a.op).join(', ')})` : ''}`;
    li.dataset.op = s.op;
    $('steps').appendChild(li);
  }
  draw();
  setStep(-1);
  document.body.dataset.ready = '1';
}

// The jitted view: the same function's value and gradients as one optimised graph (no steps to walk through: the
// replay runs it as a list of kernels, a fused group being one), or, to compare, the graph as traced (the passes
// and fusion off).
function showJitted(c, optimized) {
  const positions = c.names.map((_, i) => i);
  const options = optimized ? '' : ', { optimize: false, fuse: false }';
  const jitted = bp.jit(bp.valueAndGrad(c.fn, { gradPosition: positions }), optimized ? {} : { optimize: false, fuse: false });
  let graph;
  let stats;
  try {
    graph = bp.tidy(() => jitted.exportGraph(...c.inputs()));
    stats = jitted.stats();
  } catch (e) {
    $('message').textContent = `bprop could not jit it: ${e.message}`;
    $('message').className = 'error';
    $('message').dataset.kind = 'eval-error';
    document.body.dataset.ready = '1';
    return;
  } finally {
    jitted.dispose();
  }
  const jitModel = buildJitModel(graph, c.names);
  $('message').textContent = optimized
    ? `one graph for the value and the gradients: ${stats.nodesTraced} nodes traced, ` +
      `${stats.nodes} after optimisation, ${stats.fusedGroups} fused loop${stats.fusedGroups === 1 ? '' : 's'}, ` +
      `${stats.kernels} kernel${stats.kernels === 1 ? '' : 's'} per call`
    : `the graph as traced, before the passes: ${stats.nodesTraced} nodes, ${stats.kernels} kernels per call`;
  $('message').className = 'ok';
  $('message').dataset.kind = 'ok';
  $('graph').dataset.groups = String(graph.groups.length);
  $('code').textContent = `const step = bp.jit(bp.valueAndGrad(f, { gradPosition: [${positions.join(', ')}] })${options});
const graph = step.exportGraph(${c.names.join(', ')});   // format bprop-jit-graph/1 (docs/graph.md)
// graph.nodes: forward and backward ops in execution order, each with its fused group (or null);
// graph.groups: consecutive elementwise nodes that a replay runs as one loop;
// step.lower(...) prints the same graph as text, step.stats() counts it.`;
  for (const id of ['prev', 'next', 'reset', 'all']) $(id).hidden = true;
  $('info-title').textContent = 'What the graph is';
  $('list-title').textContent = 'Optimisation passes';
  $('step-label').textContent = '';
  $('steps').innerHTML = '';
  if (!optimized) {
    const li = document.createElement('li');
    li.textContent = 'none: every op the trace recorded, each its own kernel (choose the optimised view to compare)';
    $('steps').appendChild(li);
  }
  for (const p of graph.passes) {
    const li = document.createElement('li');
    li.textContent = `${p.pass}: ${p.before} → ${p.after} ${p.pass === 'fuse-elementwise' ? 'kernels' : 'nodes'}`;
    $('steps').appendChild(li);
  }
  const info = $('step-info');
  info.style.whiteSpace = 'pre-wrap';
  info.textContent = optimized
    ? 'bp.jit traced f and its backward once, into one graph: the bprops ran while tracing, so their ops ' +
      'are ordinary nodes here, after the forward ones. The passes (listed below) removed what was dead or repeated, ' +
      'folded constants, simplified x·1 and the like, and grouped chains of elementwise ops of one shape into loops ' +
      '(purple boxes) that run over the data once. Green: the value and the gradients the call returns.'
    : 'bp.jit traced f and its backward once, into one graph: the bprops ran while tracing, so their ops are ' +
      'ordinary nodes here, after the forward ones. This is the graph before the passes: the sens of ones, the ' +
      'x·1 and the repeated subexpressions the bprops produce are all still there, and every node is its own kernel.';
  drawJitModel($('graph'), jitModel, showTip, hideTip);
  document.body.dataset.ready = '1';
}

$('prev').addEventListener('click', () => setStep(current - 1));
$('next').addEventListener('click', () => setStep(current + 1));
$('reset').addEventListener('click', () => setStep(-1));
$('all').addEventListener('click', () => setStep(model.steps.length));
let timer = null;
const schedule = () => {
  document.body.dataset.ready = '0';
  clearTimeout(timer);
  timer = setTimeout(update, 200);
};
$('expr').addEventListener('input', () => {
  document.querySelector('input[name=mode][value=expr]').checked = true;
  schedule();
});
$('x0').addEventListener('input', schedule);
for (const r of document.querySelectorAll('input[name=mode], input[name=view]')) r.addEventListener('change', update);
update();
