// One node of a dagre-laid-out graph as SVG, shared by the backward-graph page's two views: a rounded box at the
// layout's position with its label, an optional second line, and a tooltip on hover.
const SVG = 'http://www.w3.org/2000/svg';

const clip = (text) => (text.length > 36 ? `${text.slice(0, 35)}…` : text);

/** The <g class="node kind"> for node n ({id, kind, label, sub?, tooltip}) at layout box p ({x, y, width, height}). */
export function nodeElement(n, p, tip, untip) {
  const el = document.createElementNS(SVG, 'g');
  el.setAttribute('class', `node ${n.kind}`);
  el.dataset.id = n.id;
  el.setAttribute('transform', `translate(${p.x - p.width / 2},${p.y - p.height / 2})`);
  const r = document.createElementNS(SVG, 'rect');
  r.setAttribute('width', p.width);
  r.setAttribute('height', p.height);
  el.appendChild(r);
  for (const [text, y, cls] of [[n.label, n.sub ? 16 : 18, 'label'], [n.sub, 32, 'sub']]) {
    if (!text) continue;
    const t = document.createElementNS(SVG, 'text');
    t.setAttribute('x', p.width / 2);
    t.setAttribute('y', y);
    t.setAttribute('text-anchor', 'middle');
    t.setAttribute('class', cls);
    t.textContent = clip(text);
    el.appendChild(t);
  }
  el.addEventListener('mousemove', (ev) => tip(ev, n.tooltip));
  el.addEventListener('mouseleave', untip);
  return el;
}
