// The training page: settings, the worker's progress (loss and accuracy curves), the decision boundary of the toy
// sets or the predictions on Fashion-MNIST test images, and the code the worker runs. Training is in train-worker.js.
import { fmt, LinePlot } from './common.js';

const $ = (id) => document.getElementById(id);
const curves = new LinePlot($('curves'), { onHover: hover });
const SERIES = {
  loss: { name: 'loss', color: '#d2452b' },
  acc: { name: 'accuracy', color: '#2c9a4b' },
  testAcc: { name: 'test accuracy', color: '#2c9a4b' },
  trainAcc: { name: 'training accuracy', color: '#1f5fbf', dash: [6, 4] },
};
const DOCS = {
  spiral: 'Two interleaved spirals, 300 points: the classic hard case for a small network.',
  circles: 'A disc inside a ring, 300 points.',
  xor: 'The four quadrants, opposite ones alike, 300 points.',
  fashion:
    'A class-balanced subset of Fashion-MNIST bundled with the demos (data/fashion-subset.bin, 0.9 MB): 1000 training ' +
    'and 200 held-out test images, 28×28 grey levels, 10 classes. Minibatches of 100; the accuracy is on the test images, ' +
    'which the network never trains on.',
};
const PRECISION = { float32: 'float32', bfloat16: 'O2 bfloat16', float16: 'O2 float16' };
let worker = null;
let runId = 0;
let data = null;
let history = null;
let paused = false;

function config() {
  return {
    id: runId,
    dataset: $('dataset').value,
    hidden: $('hidden').value.split(',').map(Number),
    activation: $('activation').value,
    optimizer: $('optimizer').value,
    lr: Number($('lr').value),
    mode: $('mode').value,
    precision: $('precision').value,
    n: 300,
    seed: 1,
  };
}

function layersCode(c, inputs, classes, last) {
  const layers = [];
  let w = inputs;
  for (const h of c.hidden) {
    layers.push(`  new bp.nn.Dense(${w}, ${h}, { activation: '${c.activation}' }),`);
    w = h;
  }
  layers.push(`  new bp.nn.Dense(${w}, ${classes}),${last}`);
  return layers.join('\n');
}

function ampCode(c) {
  if (c.precision === 'float32') return '';
  return `// O2 mixed precision (MindSpore's amp.auto_mixed_precision): the layers compute in ${c.precision}; the weights
// (the optimizer's float32 master copy), the logits and the loss stay float32.
bp.amp.autoMixedPrecision(net, 'O2', '${c.precision}');
`;
}

function trainCellCode(c) {
  const name = c.mode === 'graph' ? 'const cell' : 'const step';
  const withLoss = 'new bp.nn.WithLossCell(net, new bp.nn.CrossEntropyLoss())';
  if (c.precision !== 'float16') {
    return `// MindSpore's TrainOneStepCell: the loss (softmax cross-entropy of the logits), its gradients w.r.t. the
// parameters (the backward pass: each op's bprop, chained back from the loss) and the optimizer update.
${name} = new bp.nn.TrainOneStepCell(${withLoss}, optimizer);`;
  }
  return `// float16 flushes small gradients to zero: the loss is scaled before the backward and the gradients unscaled
// after (MindSpore's DynamicLossScaler: 65536, halved on an overflow, doubled after 1000 finite steps); a step
// whose gradients overflow is skipped. Each step returns [loss, overflow, the scale it used].
const scaler = new bp.amp.DynamicLossScaler();
${name} = new bp.nn.TrainOneStepWithLossScaleCell(${withLoss}, optimizer, scaler);`;
}

/** The loss of one step as the code shows it. */
function lossCode(c, args) {
  return c.precision === 'float16' ? `step(${args})[0].item()` : `step(${args}).item()`;
}

function optimizerCode(c) {
  const opt = { adam: 'Adam', adamw: 'AdamW', sgd: 'SGD' }[c.optimizer];
  return `${ampCode(c)}const optimizer = new bp.optim.${opt}(net.trainableParams(), { learningRate: ${c.lr}${c.optimizer === 'sgd' ? ', momentum: 0.9' : ''} });
${trainCellCode(c)}${
    c.mode === 'graph'
      ? `
// Graph mode: the whole step (forward, backward, update) traced once into one optimised graph and replayed,
// one call into WebAssembly per step; the same numbers as eager (compare the steps/s).
const step = bp.jit(cell);`
      : ''
  }`;
}

function codeFor(c) {
  if (c.dataset === 'fashion') {
    return `// in train-worker.js (a module Web Worker)
import { init } from 'bprop';
import { parseFashionSubset, toUnitFloats } from './fashion-subset.js';
const bp = await init();
const d = parseFashionSubset(await (await fetch('data/fashion-subset.bin')).arrayBuffer());
const trainX = toUnitFloats(d.train.pixels);    // 1000 images x 784 grey levels in [0, 1]
const xTest = bp.tensor(toUnitFloats(d.test.pixels), { shape: [200, 784] });
const net = new bp.nn.SequentialCell([
${layersCode(c, 784, 10, '  // the logits of the 10 classes')}
]);
${optimizerCode(c)}
for (;;) {
  nextBatch(xb, yb);                            // 100 training images; reshuffled every epoch
  bp.tidy(() => ${lossCode(c, "bp.tensor(xb, { shape: [100, 784] }), bp.tensor(yb, { shape: [100] })")});
}
// Every 60 ms, the held-out accuracy and the predictions shown on the left (argmax of each row):
net.setTrain(false);
const probs = net(xTest).softmax({ axis: 1 });`;
  }
  return `// in train-worker.js (a module Web Worker)
import { init } from 'bprop';
const bp = await init();
const net = new bp.nn.SequentialCell([
${layersCode(c, 2, 2, '')}
]);
${optimizerCode(c)}
const x = bp.tensor(points, { shape: [${c.n}, 2] });   // the ${c.dataset} data
const y = bp.tensor(labels, { shape: [${c.n}] });      // int32 class ids
${`for (;;) bp.tidy(() => ${lossCode(c, 'x, y')});`.padEnd(51)} // the loss before each update`;
}

function series(kind) {
  return kind === 'fashion' ? [SERIES.loss, SERIES.testAcc, SERIES.trainAcc] : [SERIES.loss, SERIES.acc];
}

function restart() {
  runId++;
  document.body.dataset.ready = '0';
  document.body.dataset.accuracy = '0';
  document.body.dataset.steps = '0';
  const c = config();
  document.body.dataset.dataset = c.dataset;
  history = { kind: c.dataset, steps: [], loss: [], acc: [], trainAcc: [] };
  data = null;
  paused = false;
  $('pause').textContent = 'Pause';
  const fashion = c.dataset === 'fashion';
  $('toy-view').hidden = fashion;
  $('fashion-view').hidden = !fashion;
  $('dataset-doc').textContent = DOCS[c.dataset];
  $('legend').innerHTML = series(c.dataset)
    .map((s) => `<span style="--c:${s.color}">${s.name}</span>`)
    .join('');
  $('stat-steps').textContent = 'step 0';
  $('stat-loss').textContent = 'loss —';
  $('stat-acc').textContent = fashion ? 'test accuracy —' : 'accuracy —';
  $('stat-speed').textContent = '— steps/s';
  $('stat-precision').textContent = precisionText(c.precision, {});
  document.body.dataset.precision = c.precision;
  $('fgrid').replaceChildren();
  curves.setData([], []);
  $('status').textContent = fashion
    ? 'loading data/fashion-subset.bin in the worker'
    : `training on the ${c.dataset} data in the worker${precisionNote(c.precision)}`;
  $('status').className = '';
  $('code').textContent = codeFor(c);
  drawBoundary(null, 1);
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
  if (!data || data.kind !== 'points') return;
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

/** One tile per shown test image: the picture (dark on white), the prediction, the true class. */
function buildGrid(m) {
  const px = m.rows * m.cols;
  const tiles = [];
  for (let i = 0; i < m.labels.length; i++) {
    const fig = document.createElement('figure');
    fig.className = 'tile';
    fig.dataset.truth = String(m.labels[i]);
    const cv = document.createElement('canvas');
    cv.width = m.cols;
    cv.height = m.rows;
    const ctx = cv.getContext('2d');
    const img = ctx.createImageData(m.cols, m.rows);
    for (let p = 0; p < px; p++) {
      const v = 255 - m.images[i * px + p];
      img.data.set([v, v, v, 255], p * 4);
    }
    ctx.putImageData(img, 0, 0);
    const cap = document.createElement('figcaption');
    const pred = document.createElement('span');
    pred.className = 'pred';
    pred.textContent = '…';
    const truth = document.createElement('span');
    truth.className = 'truth';
    truth.textContent = m.classNames[m.labels[i]];
    cap.append(pred, truth);
    fig.append(cv, cap);
    tiles.push(fig);
  }
  $('fgrid').replaceChildren(...tiles);
  $('fgrid-doc').textContent =
    `The first ${m.labels.length} of the ${m.nTest} held-out test images: the network's prediction ` +
    '(green when right, red when wrong) over the true class.';
}

function updateGrid(m) {
  const tiles = $('fgrid').children;
  for (let i = 0; i < tiles.length && i < m.preds.length; i++) {
    const fig = tiles[i];
    const p = m.preds[i];
    const right = String(p) === fig.dataset.truth;
    fig.dataset.pred = String(p);
    fig.dataset.correct = right ? '1' : '0';
    fig.querySelector('.pred').textContent = `${right ? '✓' : '✗'} ${data.classNames[p]}`;
    fig.title = `predicted ${data.classNames[p]} (p = ${m.confidence[i].toFixed(2)}), true ${data.classNames[Number(fig.dataset.truth)]}`;
  }
}

/** The precision in use; for float16 the current loss scale and the steps skipped on an overflow. */
function precisionText(precision, m) {
  if (precision !== 'float16') return PRECISION[precision];
  return `${PRECISION[precision]}, loss scale ${m.lossScale ?? '—'}, ${m.skipped ?? 0} steps skipped`;
}

function precisionNote(precision) {
  return precision === 'float32' ? '' : ` (${PRECISION[precision]} mixed precision)`;
}

function pct(v) {
  return `${(v * 100).toFixed(1)}%`;
}

function hover(i) {
  if (i < 0 || !history || !history.steps.length) {
    $('hover').innerHTML = '&nbsp;';
    return;
  }
  const acc = history.kind === 'fashion'
    ? `test accuracy ${pct(history.acc[i])}, training accuracy ${pct(history.trainAcc[i])}`
    : `accuracy ${pct(history.acc[i])}`;
  $('hover').textContent = `step ${history.steps[i]}: loss ${fmt(history.loss[i], 4)}, ${acc}`;
}

function onProgress(m) {
  const fashion = history.kind === 'fashion';
  history.steps.push(m.steps);
  history.loss.push(m.loss);
  history.acc.push(m.acc);
  history.trainAcc.push(fashion ? m.trainAcc : NaN);
  if (history.steps.length > 2000) {
    // Long runs: keep every other point so drawing stays cheap.
    for (const k of ['steps', 'loss', 'acc', 'trainAcc']) {
      history[k] = history[k].filter((_, i, a) => i % 2 === 0 || i === a.length - 1);
    }
  }
  $('stat-steps').textContent = fashion ? `step ${m.steps} (epoch ${m.epoch})` : `step ${m.steps}`;
  $('stat-loss').textContent = `loss ${fmt(m.loss, 4)}`;
  $('stat-acc').textContent = fashion
    ? `test accuracy ${pct(m.acc)} (training ${pct(m.trainAcc)})`
    : `accuracy ${pct(m.acc)}`;
  $('stat-speed').textContent = `${m.stepsPerSec.toFixed(0)} steps/s`;
  $('stat-precision').textContent = precisionText(m.precision, m);
  document.body.dataset.accuracy = String(m.acc);
  document.body.dataset.steps = String(m.steps);
  document.body.dataset.loss = String(m.loss);
  document.body.dataset.tensors = String(m.tensors);
  if (fashion) updateGrid(m);
  else drawBoundary(m.boundary, m.grid);
  const ys = { loss: history.loss, accuracy: history.acc, 'test accuracy': history.acc, 'training accuracy': history.trainAcc };
  curves.setData(history.steps, series(history.kind).map((s) => ({ ...s, ys: ys[s.name] })));
  document.body.dataset.ready = '1';
}

function onMessage(ev) {
  const m = ev.data;
  if (m.type === 'ready') {
    $('status').textContent = 'bprop loaded in the worker';
    restart();
    return;
  }
  if (m.id !== runId) return; // from a run the page has since replaced
  if (m.type === 'data') {
    data = m;
    if (m.kind === 'images') {
      buildGrid(m);
      $('status').textContent =
        `data/fashion-subset.bin: ${m.nTrain} training and ${m.nTest} test images of ${m.rows}×${m.cols}` +
        precisionNote(document.body.dataset.precision);
      $('status').className = '';
    } else {
      drawBoundary(null, 1);
    }
  } else if (m.type === 'progress') {
    onProgress(m);
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
for (const id of ['dataset', 'hidden', 'activation', 'optimizer', 'lr', 'mode', 'precision']) $(id).addEventListener('change', restart);
$('pause').addEventListener('click', () => {
  paused = !paused;
  worker.postMessage({ type: paused ? 'pause' : 'resume' });
  $('pause').textContent = paused ? 'Resume' : 'Pause';
});
drawBoundary(null, 1);
