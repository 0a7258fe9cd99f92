// The jitted view of the backward-graph page: what bp.jit makes of the same function's value and gradient, one
// optimised graph holding the forward and the backward, with the elementwise chains that run as one loop drawn
// as boxes around their nodes ("fused #k"). The data is bp.jit(...).exportGraph(...) (bprop-jit-graph/1).
import dagre from '/node_modules/@dagrejs/dagre/dist/dagre.esm.js';

import { fmt } from './common.js';
import { nodeElement } from './svg-node.js';

const SVG = 'http://www.w3.org/2000/svg';

function shapeText(v) {
  return v.shape.length === 0 ? '' : `(${v.shape.join('×')})`;
}

function attrText(attrs) {
  const e = Object.entries(attrs ?? {});
  return e.length ? ` {${e.map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(', ')}}` : '';
}

/**
 * Nodes (values that are not computed: arguments, constants, Parameters; and the graph's nodes), edges and
 * groups of an exported jit graph. `names` names the arguments; the outputs are the value, then the gradients.
 */
export function buildJitModel(graph, names) {
  const values = new Map(graph.values.map((v) => [v.id, v]));
  const nodes = new Map();
  const edges = [];
  const source = new Map(); // value id -> drawn node id
  for (const v of graph.values) {
    if (v.kind === 'node') continue;
    const id = `v${v.id}`;
    if (v.kind === 'argument') {
      nodes.set(id, { id, kind: 'input', label: names[v.argument] ?? `arg ${v.argument}`, sub: shapeText(v),
        tooltip: `argument ${v.argument}: ${v.dtype}${shapeText(v) || ' scalar'}` });
    } else if (v.kind === 'parameter') {
      nodes.set(id, { id, kind: 'input', label: v.name, sub: shapeText(v), tooltip: `Parameter '${v.name}' (read live at every replay)` });
    } else {
      const scalar = v.shape.length === 0 && v.values.length === 1;
      const shown = v.values.map((x) => (typeof x === 'number' ? fmt(x, 5) : x)).join(', ');
      nodes.set(id, { id, kind: 'const', label: scalar ? fmt(v.values[0], 4) : 'const', sub: shapeText(v),
        tooltip: `constant captured while tracing: ${v.dtype}${shapeText(v)}\n[${shown}${v.truncated ? ', …' : ''}]` });
    }
    source.set(v.id, id);
  }
  const outputRole = new Map(graph.outputs.map((o, i) => [o, i === 0 ? 'value' : `d/d${names[i - 1] ?? `arg ${i - 1}`}`]));
  for (const n of graph.nodes) {
    const id = `n${n.index}`;
    const out = values.get(n.output);
    const role = outputRole.get(n.output);
    nodes.set(id, {
      id, kind: role ? 'grad' : 'fwd', label: n.op, sub: [shapeText(out), role ? `→ ${role}` : ''].filter(Boolean).join(' '),
      group: n.group,
      tooltip: `node ${n.index}: %${n.output} = ${n.op}(${n.inputs.map((i) => (i === null ? 'None' : `%${i}`)).join(', ')})` +
        `${attrText(n.attrs)} : ${out.dtype}${shapeText(out) || ' scalar'}` +
        `${n.group === null ? '\nruns as its own kernel' : `\nruns in fused loop #${n.group}`}${n.where ? `\nfrom ${n.where}` : ''}`,
    });
    n.inputs.forEach((v, k) => {
      if (v === null || !source.has(v)) return;
      edges.push({ from: source.get(v), to: id, label: n.inputs.length > 1 ? String(k) : '' });
    });
    source.set(n.output, id);
  }
  // An output that is an argument or a constant (a gradient folded to a constant) gets a node of its own.
  graph.outputs.forEach((o, i) => {
    const from = source.get(o);
    if (!from || from.startsWith('n')) return;
    const id = `out${i}`;
    nodes.set(id, { id, kind: 'grad', label: outputRole.get(o), sub: '', tooltip: `output ${i} is %${o} itself` });
    edges.push({ from, to: id, label: '' });
  });
  return { graph, nodes, edges, groups: graph.groups };
}

/** Draws the model into `container` as an SVG; `tip(ev, text)` / `untip()` show and hide the tooltip. */
export function drawJitModel(container, model, tip, untip) {
  const g = new dagre.graphlib.Graph({ multigraph: true, compound: true });
  g.setGraph({ rankdir: 'TB', nodesep: 22, ranksep: 34, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const grp of model.groups) g.setNode(`group${grp.id}`, { label: `fused #${grp.id}`, paddingTop: 22 });
  for (const n of model.nodes.values()) {
    const w = Math.max(64, n.label.length * 12 * 0.62, (n.sub ?? '').length * 10.5 * 0.62) + 22;
    g.setNode(n.id, { width: Math.min(w, 240), height: n.sub ? 40 : 28 });
    if (n.group !== undefined && n.group !== null) g.setParent(n.id, `group${n.group}`);
  }
  model.edges.forEach((e, i) => g.setEdge(e.from, e.to, {}, `e${i}`));
  dagre.layout(g);
  const { width, height } = g.graph();
  const svg = document.createElementNS(SVG, 'svg');
  const scale = Math.max(1, Math.min(1.5, (container.clientWidth - 4) / width));
  svg.setAttribute('width', width * scale);
  svg.setAttribute('height', height * scale);
  svg.style.margin = '0 auto';
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.innerHTML = '<defs><marker id="arrow-j" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#7d8896"/></marker></defs>';
  for (const grp of model.groups) {
    const box = g.node(`group${grp.id}`);
    const el = document.createElementNS(SVG, 'g');
    el.setAttribute('class', 'group');
    el.dataset.group = String(grp.id);
    el.setAttribute('transform', `translate(${box.x - box.width / 2},${box.y - box.height / 2})`);
    const r = document.createElementNS(SVG, 'rect');
    r.setAttribute('width', box.width);
    r.setAttribute('height', box.height);
    el.appendChild(r);
    const t = document.createElementNS(SVG, 'text');
    t.setAttribute('x', 8);
    t.setAttribute('y', 15);
    t.textContent = `fused #${grp.id}: ${grp.nodes.length} ops, one loop`;
    el.appendChild(t);
    svg.appendChild(el);
  }
  model.edges.forEach((e, i) => {
    const pts = g.edge({ v: e.from, w: e.to, name: `e${i}` }).points;
    const el = document.createElementNS(SVG, 'g');
    el.setAttribute('class', 'edge');
    const path = document.createElementNS(SVG, 'path');
    path.setAttribute('d', pts.map((p, k) => `${k ? 'L' : 'M'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' '));
    path.setAttribute('marker-end', 'url(#arrow-j)');
    el.appendChild(path);
    svg.appendChild(el);
  });
  for (const n of model.nodes.values()) svg.appendChild(nodeElement(n, g.node(n.id), tip, untip));
  container.replaceChildren(svg);
}
