import { fmt, LinePlot } from './common.js';

const $ = (id) => document.getElementById(id);
const curves = new LinePlot($('curves'), { onHover: hover });
let worker = null;
let data = null;
let history = { steps: [], loss: [], acc: [] };
let paused = false;

function config() {
  return {
    dataset: $('dataset').value,
    hidden: $('hidden').value.split(',').map(Number),
    activation: $('activation').value,
    optimizer: $('optimizer').value,
    lr: Number($('lr').value),
    n: 300,
    seed: 1,
  };
}

function codeFor(c) {
  const opt = { adam: 'Adam', adamw: 'AdamW', sgd: 'SGD' }[c.optimizer];
  const layers = [];
  let w = 2;
  for (const h of c.hidden) {
    layers.push(`  new bp.nn.Dense(${w}, ${h}, { activation: '${c.activation}' }),`);
    w = h;
  }
  layers.push(`  new bp.nn.Dense(${w}, 2),`);
  return `// in train-worker.js (a module Web Worker)
import { init } from 'bprop';
const bp = await init();
const net = new bp.nn.SequentialCell([
${layers.join('\n')}
]);
const optimizer = new bp.optim.${opt}(net.trainableParams(), { learningRate: ${c.lr}${c.optimizer === 'sgd' ? ', momentum: 0.9' : ''} });
// MindSpore's TrainOneStepCell: loss, its gradients w.r.t. the parameters (the backward pass), the update.
const step = new bp.nn.TrainOneStepCell(new bp.nn.WithLossCell(net, new bp.nn.CrossEntropyLoss()), optimizer);
const x = bp.tensor(points, { shape: [${c.n}, 2] });    // the ${c.dataset} data
const y = bp.tensor(labels, { shape: [${c.n}] });       // int32 class ids
for (;;) bp.tidy(() => step(x, y).item());              // loss before each update`;
}

function restart() {
  document.body.dataset.ready = '0';
  document.body.dataset.accuracy = '0';
  history = { steps: [], loss: [], acc: [] };
  data = null;
  paused = false;
  $('pause').textContent = 'Pause';
  const c = config();
  $('code').textContent = codeFor(c);
  worker.postMessage({ type: 'start', config: c });
}

function drawBoundary(boundary, grid) {
  const cv = $('boundary');
  const ctx = cv.getContext('2d');
  const W = cv.width;
  const cell = W / grid;
  if (boundary) {
    for (let i = 0; i < grid; i++) {
      for (let j = 0; j < grid; j++) {
        const p = boundary[i * grid + j];
        // orange (class 0) to blue (class 1), pale
        const r = Math.round(250 * (1 - p) + 200 * p);
        const g = Math.round(215 * (1 - p) + 220 * p);
        const b = Math.round(180 * (1 - p) + 250 * p);
        ctx.fillStyle = `rgb(${r},${g},${b})`;
        ctx.fillRect(j * cell, i * cell, cell + 1, cell + 1);
      }
    }
  } else {
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, W, W);
  }
  if (!data) return;
  for (let i = 0; i < data.labels.length; i++) {
    const x = ((data.points[2 * i] + 1.2) / 2.4) * W;
    const y = ((1.2 - data.points[2 * i + 1]) / 2.4) * W;
    ctx.fillStyle = data.labels[i] ? '#1f5fbf' : '#e07b1f';
    ctx.strokeStyle = '#fff';
    ctx.beginPath();
    ctx.arc(x, y, 3.2, 0, 2 * Math.PI);
    ctx.fill();
    ctx.stroke();
  }
}

function hover(i) {
  if (i < 0 || !history.steps.length) {
    $('hover').innerHTML = '&nbsp;';
    return;
  }
  $('hover').textContent = `step ${history.steps[i]}: loss ${fmt(history.loss[i], 4)}, accuracy ${(history.acc[i] * 100).toFixed(1)}%`;
}

function onMessage(ev) {
  const m = ev.data;
  if (m.type === 'ready') {
    $('status').textContent = 'bprop loaded in the worker';
    restart();
  } else if (m.type === 'data') {
    data = { points: m.points, labels: m.labels };
    drawBoundary(null, 1);
  } else if (m.type === 'progress') {
    history.steps.push(m.steps);
    history.loss.push(m.loss);
    history.acc.push(m.acc);
    if (history.steps.length > 2000) {
      // Long runs: keep every other point so drawing stays cheap.
      for (const k of Object.keys(history)) history[k] = history[k].filter((_, i) => i % 2 === 0 || i === history[k].length - 1);
    }
    $('stat-steps').textContent = `step ${m.steps}`;
    $('stat-loss').textContent = `loss ${fmt(m.loss, 4)}`;
    $('stat-acc').textContent = `accuracy ${(m.acc * 100).toFixed(1)}%`;
    $('stat-speed').textContent = `${m.stepsPerSec.toFixed(0)} steps/s`;
    document.body.dataset.accuracy = String(m.acc);
    document.body.dataset.steps = String(m.steps);
    drawBoundary(m.boundary, m.grid);
    curves.setData(history.steps, [
      { name: 'loss', color: '#d2452b', ys: history.loss },
      { name: 'accuracy', color: '#2c9a4b', ys: history.acc },
    ]);
    document.body.dataset.ready = '1';
  } else if (m.type === 'error') {
    $('status').textContent = `Training failed: ${m.message}`;
    $('status').className = 'error';
    document.body.dataset.ready = '1';
  }
}

worker = new Worker(new URL('./train-worker.js', import.meta.url), { type: 'module' });
worker.onmessage = onMessage;
worker.onerror = (e) => {
  $('status').textContent = `The training worker failed: ${e.message}`;
  $('status').className = 'error';
};
$('restart').addEventListener('click', restart);
for (const id of ['dataset', 'hidden', 'activation', 'optimizer', 'lr']) $(id).addEventListener('change', restart);
$('pause').addEventListener('click', () => {
  paused = !paused;
  worker.postMessage({ type: paused ? 'pause' : 'resume' });
  $('pause').textContent = paused ? 'Resume' : 'Pause';
});
drawBoundary(null, 1);
