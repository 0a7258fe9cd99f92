// Trains a classifier with bprop off the page's main thread: a small MLP on 2-D toy data (spiral, circles, xor),
// or on the bundled Fashion-MNIST subset (784 pixels in, 10 classes, minibatches, held-out test accuracy), in
// float32 or with O2 mixed precision (bfloat16, or float16 with a dynamic loss scale).
// Messages in: {type: 'start', config} | {type: 'pause'} | {type: 'resume'}.
// Messages out: {type: 'ready'} | {type: 'data', kind: 'points' | 'images', ...} | {type: 'progress', ...} |
// {type: 'error', message}; data, progress and error carry the id of the config they belong to, so the page can
// drop messages of a run it has already replaced.
import { init } from '/web/index.js';
import { makeData, rng } from './toy-data.js';
import { FASHION_CLASSES, parseFashionSubset, toUnitFloats } from './fashion-subset.js';

const bp = await init();

const GRID = 48; // decision-boundary resolution, toy sets
const SHOWN = 30; // test images whose predictions the page shows, Fashion-MNIST
const BATCH = 100; // minibatch size, Fashion-MNIST
const TICK_MS = 60; // training time between two progress messages

let run = null;
let fashion = null; // the parsed subset file, fetched once

function makeNet(inputs, hidden, activation, classes) {
  const layers = [];
  let width = inputs;
  for (const h of hidden) {
    layers.push(new bp.nn.Dense(width, h, { activation }));
    width = h;
  }
  layers.push(new bp.nn.Dense(width, classes));
  return new bp.nn.SequentialCell(layers);
}

function makeOptimizer(name, params, lr) {
  if (name === 'sgd') return new bp.optim.SGD(params, { learningRate: lr, momentum: 0.9 });
  if (name === 'adamw') return new bp.optim.AdamW(params, { learningRate: lr });
  return new bp.optim.Adam(params, { learningRate: lr });
}

/**
 * MindSpore's TrainOneStepCell around WithLossCell: softmax cross-entropy, its gradients, the update; in graph mode
 * the whole step jitted (one graph, one call into the module per step). With config.precision float16 or bfloat16
 * the network runs under O2 mixed precision (float32 weights, outputs and loss); float16 scales the loss
 * dynamically (TrainOneStepWithLossScaleCell) and skips the steps whose gradients overflow.
 * Returns { train(x, y) -> loss of one step, stats() -> progress fields, dispose() }.
 */
function makeStep(net, config) {
  const precision = config.precision ?? 'float32';
  if (precision !== 'float32') bp.amp.autoMixedPrecision(net, 'O2', precision);
  const optimizer = makeOptimizer(config.optimizer, net.trainableParams(), config.lr);
  const withLoss = new bp.nn.WithLossCell(net, new bp.nn.CrossEntropyLoss());
  const scaler = precision === 'float16' ? new bp.amp.DynamicLossScaler() : null;
  const cell = scaler
    ? new bp.nn.TrainOneStepWithLossScaleCell(withLoss, optimizer, scaler)
    : new bp.nn.TrainOneStepCell(withLoss, optimizer);
  const step = config.mode === 'graph' ? bp.jit(cell) : cell;
  let skipped = 0;
  return {
    train: (x, y) =>
      bp.tidy(() => {
        if (!scaler) return step(x, y).item();
        const [loss, overflow] = step(x, y);
        if (overflow.item()) skipped++;
        return loss.item();
      }),
    stats: () => ({ precision, ...(scaler ? { lossScale: scaler.currentScale, skipped } : {}) }),
    dispose: () => {
      if (config.mode === 'graph') step.dispose();  // the jitted step's graphs
    },
  };
}

/** A task: dataMessage, train() -> loss of one step, evaluate() -> progress fields, dispose(). */
function toyTask(config) {
  const data = makeData(config.dataset, config.n ?? 300, config.seed ?? 1);
  const n = data.labels.length;
  const net = makeNet(2, config.hidden, config.activation, 2);
  const step = makeStep(net, config);
  const x = bp.keep(bp.tensor(data.pts, { shape: [n, 2] }));
  const y = bp.keep(bp.tensor(data.labels, { shape: [n] }));
  const grid = new Float32Array(GRID * GRID * 2);
  for (let i = 0; i < GRID; i++) {
    for (let j = 0; j < GRID; j++) {
      grid[(i * GRID + j) * 2] = -1.2 + (2.4 * (j + 0.5)) / GRID;
      grid[(i * GRID + j) * 2 + 1] = 1.2 - (2.4 * (i + 0.5)) / GRID;
    }
  }
  const g = bp.keep(bp.tensor(grid, { shape: [GRID * GRID, 2] }));
  return {
    dataMessage: { type: 'data', kind: 'points', points: data.pts, labels: data.labels },
    train: () => step.train(x, y),
    evaluate: () =>
      bp.tidy(() => {
        net.setTrain(false);
        const pred = net(x).argmax({ axis: 1 }).dataSync();
        let ok = 0;
        for (let i = 0; i < pred.length; i++) ok += pred[i] === data.labels[i] ? 1 : 0;
        const p = net(g).softmax({ axis: 1 }).dataSync();
        const boundary = new Float32Array(GRID * GRID);
        for (let i = 0; i < boundary.length; i++) boundary[i] = p[i * 2 + 1];
        net.setTrain(true);
        return { acc: ok / pred.length, boundary, grid: GRID, ...step.stats() };
      }),
    dispose: () => {
      for (const t of [x, y, g]) t.dispose();
      step.dispose();
    },
  };
}

async function loadFashion() {
  if (!fashion) {
    const url = new URL('./data/fashion-subset.bin', import.meta.url);
    const res = await fetch(url);
    if (!res.ok) throw new Error(`could not load ${url.pathname}: HTTP ${res.status}`);
    fashion = parseFashionSubset(await res.arrayBuffer());
  }
  return fashion;
}

/** Row-wise argmax of [n, k] probabilities: { labels, confidence }. */
function argmaxRows(p, n, k) {
  const labels = new Int32Array(n);
  const confidence = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let best = 0;
    for (let c = 1; c < k; c++) if (p[i * k + c] > p[i * k + best]) best = c;
    labels[i] = best;
    confidence[i] = p[i * k + best];
  }
  return { labels, confidence };
}

function fashionTask(config, d) {
  const px = d.rows * d.cols;
  const k = d.classes;
  const nTrain = d.train.count;
  const nTest = d.test.count;
  const trainX = toUnitFloats(d.train.pixels);
  const net = makeNet(px, config.hidden, config.activation, k);
  const step = makeStep(net, config);
  const xTrain = bp.keep(bp.tensor(trainX, { shape: [nTrain, px] }));
  const xTest = bp.keep(bp.tensor(toUnitFloats(d.test.pixels), { shape: [nTest, px] }));
  // Minibatches: the training images in an order reshuffled (seeded) at the start of every epoch.
  const batch = Math.min(BATCH, nTrain);
  const rand = rng(config.seed ?? 1);
  const order = Int32Array.from({ length: nTrain }, (_, i) => i);
  let pos = nTrain;
  let epoch = 0;
  const xb = new Float32Array(batch * px);
  const yb = new Int32Array(batch);
  const nextBatch = () => {
    if (pos + batch > nTrain) {
      for (let i = nTrain - 1; i > 0; i--) {
        const j = Math.floor(rand() * (i + 1));
        [order[i], order[j]] = [order[j], order[i]];
      }
      pos = 0;
      epoch++;
    }
    for (let b = 0; b < batch; b++) {
      const i = order[pos + b];
      xb.set(trainX.subarray(i * px, (i + 1) * px), b * px);
      yb[b] = d.train.labels[i];
    }
    pos += batch;
  };
  const shown = Math.min(SHOWN, nTest);
  return {
    dataMessage: {
      type: 'data',
      kind: 'images',
      rows: d.rows,
      cols: d.cols,
      classNames: FASHION_CLASSES.slice(0, k),
      nTrain,
      nTest,
      images: d.test.pixels.slice(0, shown * px),
      labels: d.test.labels.slice(0, shown),
    },
    train: () => {
      nextBatch();
      return bp.tidy(() => step.train(bp.tensor(xb, { shape: [batch, px] }), bp.tensor(yb, { shape: [batch] })));
    },
    evaluate: () =>
      bp.tidy(() => {
        net.setTrain(false);
        const test = argmaxRows(net(xTest).softmax({ axis: 1 }).dataSync(), nTest, k);
        const trainPred = net(xTrain).argmax({ axis: 1 }).dataSync();
        net.setTrain(true);
        let ok = 0;
        for (let i = 0; i < nTest; i++) ok += test.labels[i] === d.test.labels[i] ? 1 : 0;
        let okTrain = 0;
        for (let i = 0; i < nTrain; i++) okTrain += trainPred[i] === d.train.labels[i] ? 1 : 0;
        return {
          acc: ok / nTest,
          trainAcc: okTrain / nTrain,
          epoch,
          preds: test.labels.slice(0, shown),
          confidence: test.confidence.slice(0, shown),
          ...step.stats(),
        };
      }),
    dispose: () => {
      xTrain.dispose();
      xTest.dispose();
      step.dispose();
    },
  };
}

/** Stops the current run; its tensors are freed now, or by its pending tick. */
function stopRun() {
  const r = run;
  run = null;
  if (!r || r.stop) return; // never started, or already stopped (and freed) by an error
  r.stop = true;
  if (!r.pending && r.task) r.task.dispose();
}

async function start(config) {
  stopRun();
  const cur = { stop: false, paused: false, pending: false, task: null, steps: 0, trainMs: 0 };
  run = cur;
  const data = config.dataset === 'fashion' ? await loadFashion() : null;
  if (cur.stop) return; // another start came while the file was loading
  bp.nn.setSeed(config.seed ?? 1);
  cur.task = data ? fashionTask(config, data) : toyTask(config);
  postMessage({ ...cur.task.dataMessage, id: config.id });
  cur.started = performance.now();
  cur.tick = () => {
    cur.pending = false;
    if (cur.stop) {
      cur.task.dispose();
      return;
    }
    if (cur.paused) return;
    try {
      const t0 = performance.now();
      let sum = 0;
      let k = 0;
      while (performance.now() - t0 < TICK_MS) {
        sum += cur.task.train();
        k++;
        cur.steps++;
      }
      cur.trainMs += performance.now() - t0;
      postMessage({
        type: 'progress',
        id: config.id,
        steps: cur.steps,
        loss: sum / k, // mean training loss over this tick's steps
        stepsPerSec: (cur.steps / cur.trainMs) * 1000,
        elapsedMs: performance.now() - cur.started,
        ...cur.task.evaluate(),
        tensors: bp.memory().tensors, // live tensors in the heap: flat from one tick to the next
      });
      cur.pending = true;
      setTimeout(cur.tick, 0);
    } catch (e) {
      postMessage({ type: 'error', id: config.id, message: `${e.name}: ${e.message}` });
      cur.stop = true;
      cur.task.dispose();
    }
  };
  cur.pending = true;
  setTimeout(cur.tick, 0);
}

onmessage = (ev) => {
  const m = ev.data;
  if (m.type === 'start') {
    start(m.config).catch((e) => postMessage({ type: 'error', id: m.config.id, message: `${e.name}: ${e.message}` }));
  } else if (m.type === 'pause' && run) {
    run.paused = true;
  } else if (m.type === 'resume' && run && run.paused) {
    run.paused = false;
    if (!run.pending && run.tick) {
      run.pending = true;
      setTimeout(run.tick, 0);
    }
  }
};

postMessage({ type: 'ready' });
