// The Tiny GPT page: settings, the worker's progress (loss curves, tokens/s), samples, attention heat maps of
// every head for a prompt, and loading a native checkpoint. Training is in gpt-worker.js.
import { fmt, LinePlot } from './common.js';

const $ = (id) => document.getElementById(id);
const curves = new LinePlot($('curves'), { onHover: hover });
let worker = null;
let runId = 0;
let history = null;
let paused = false;
let layout = null; // { layers, heads } of the running model

function config() {
  return {
    id: runId,
    layers: Number($('layers').value),
    width: Number($('width').value),
    heads: Number($('heads').value),
    context: Number($('context').value),
    batch: Number($('batch').value),
    lr: Number($('lr').value),
    seed: 1,
  };
}

function reset() {
  runId++;
  history = { steps: [], loss: [], valSteps: [], val: [] };
  paused = false;
  $('pause').textContent = 'Pause';
  $('sample').textContent = '';
  $('maps').replaceChildren();
  document.body.dataset.valLoss = '';
  document.body.dataset.samples = '0';
  curves.setData([], []);
}

function restart() {
  reset();
  worker.postMessage({ type: 'start', config: config() });
}

function hover(i) {
  if (i < 0 || !history || !history.steps.length) {
    $('hover').innerHTML = '&nbsp;';
    return;
  }
  $('hover').textContent = `step ${history.steps[i]}: training loss ${fmt(history.loss[i], 4)}`;
}

function draw() {
  // Validation losses as a series over the training steps (NaN between evaluations breaks no line: held).
  const val = [];
  let j = 0;
  let last = NaN;
  for (const s of history.steps) {
    while (j < history.valSteps.length && history.valSteps[j] <= s) last = history.val[j++];
    val.push(last);
  }
  curves.setData(history.steps, [
    { name: 'training loss', color: '#d2452b', ys: history.loss },
    { name: 'validation loss', color: '#1f5fbf', ys: val },
  ]);
}

function drawMaps(chars, maps) {
  const box = $('maps');
  box.replaceChildren();
  const heads = maps[0].length;
  box.style.gridTemplateColumns = `repeat(${heads}, max-content)`;
  const n = chars.length;
  const cell = Math.max(3, Math.min(10, Math.floor(220 / n)));
  maps.forEach((layer, l) => {
    layer.forEach((w, h) => {
      const fig = document.createElement('figure');
      fig.className = 'map';
      const c = document.createElement('canvas');
      c.width = n * cell;
      c.height = n * cell;
      c.dataset.layer = String(l);
      c.dataset.head = String(h);
      const g = c.getContext('2d');
      for (let i = 0; i < n; i++) {
        for (let k = 0; k < n; k++) {
          const v = Math.max(0, Math.min(1, w[i][k]));
          const shade = Math.round(255 * (1 - Math.sqrt(v)));
          g.fillStyle = `rgb(${shade}, ${shade}, 255)`;
          g.fillRect(k * cell, i * cell, cell, cell);
        }
      }
      c.title = `layer ${l + 1}, head ${h + 1}`;
      c.addEventListener('mousemove', (ev) => {
        const r = c.getBoundingClientRect();
        const i = Math.floor((ev.clientY - r.top) / cell);
        const k = Math.floor((ev.clientX - r.left) / cell);
        if (i >= 0 && i < n && k >= 0 && k < n) {
          c.title = `layer ${l + 1}, head ${h + 1}: '${chars[i]}' -> '${chars[k]}' ${fmt(w[i][k], 3)}`;
        }
      });
      const cap = document.createElement('figcaption');
      cap.textContent = `layer ${l + 1} · head ${h + 1}`;
      fig.append(c, cap);
      box.append(fig);
    });
  });
  document.body.dataset.maps = String(maps.length * heads);
}

function onMessage(ev) {
  const m = ev.data;
  if (m.type === 'ready') {
    $('status').textContent = 'bprop loaded in the worker';
    restart();
    return;
  }
  if (m.id !== undefined && m.id !== runId) return; // a replaced run
  if (m.type === 'started') {
    const c = m.config;
    layout = { layers: c.layers, heads: c.heads };
    $('stat-model').textContent =
      `${c.layers} layer${c.layers === 1 ? '' : 's'} · width ${c.width} · ${c.heads} heads · context ${c.context} · ${m.parameters} parameters · vocabulary ${m.vocab}`;
    $('status').textContent = m.loadedFrom ? `continuing ${m.loadedFrom}` : 'training';
    document.body.dataset.layers = String(c.layers);
    document.body.dataset.heads = String(c.heads);
    document.body.dataset.ready = '1';
  } else if (m.type === 'progress') {
    history.steps.push(m.steps);
    history.loss.push(m.loss);
    if (m.val !== null) {
      history.valSteps.push(m.steps);
      history.val.push(m.val);
      $('stat-val').textContent = `validation ${fmt(m.val, 4)}`;
      document.body.dataset.valLoss = String(m.val);
    }
    $('stat-steps').textContent = `step ${m.steps}`;
    $('stat-loss').textContent = `loss ${fmt(m.loss, 4)}`;
    $('stat-speed').textContent = `${Math.round(m.tokensPerSec)} tokens/s`;
    document.body.dataset.steps = String(m.steps);
    document.body.dataset.loss = String(m.loss);
    document.body.dataset.tensors = String(m.tensors);
    draw();
  } else if (m.type === 'sample') {
    const head = m.prompt && m.prompt !== '\n' ? m.prompt : '';
    $('sample').textContent = `step ${m.step}:\n${head}${m.text}`;
    document.body.dataset.samples = String(Number(document.body.dataset.samples || 0) + 1);
  } else if (m.type === 'attention') {
    drawMaps(m.chars, m.maps);
  } else if (m.type === 'error') {
    $('status').innerHTML = '';
    const e = document.createElement('span');
    e.className = 'error';
    e.textContent = m.message;
    $('status').append(e);
    document.body.dataset.error = m.message;
  }
}

worker = new Worker(new URL('./gpt-worker.js', import.meta.url), { type: 'module' });
worker.onmessage = onMessage;
worker.onerror = (e) => {
  $('status').textContent = `worker error: ${e.message}`;
};
for (const id of ['layers', 'width', 'heads', 'context', 'batch', 'lr']) $(id).addEventListener('change', restart);
$('restart').addEventListener('click', restart);
$('pause').addEventListener('click', () => {
  paused = !paused;
  $('pause').textContent = paused ? 'Resume' : 'Pause';
  worker.postMessage({ type: paused ? 'pause' : 'resume' });
});
$('show').addEventListener('click', () => worker.postMessage({ type: 'attention', prompt: $('prompt').value }));
$('continue').addEventListener('click', () => worker.postMessage({ type: 'sample', prompt: $('prompt').value }));
$('checkpoint').addEventListener('change', async () => {
  const file = $('checkpoint').files[0];
  if (!file) return;
  reset();
  const bytes = await file.arrayBuffer();
  worker.postMessage({ type: 'load', bytes, name: file.name, config: config() }, [bytes]);
});
