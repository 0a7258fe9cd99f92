// Trains a small classifier on 2-D toy data with bprop, off the page's main thread.
// Messages in: {type: 'start', config} | {type: 'pause'} | {type: 'resume'}.
// Messages out: {type: 'ready'} | {type: 'data', points, labels} | {type: 'progress', ...} | {type: 'error', message}.
import { init } from '/web/index.js';

const bp = await init();
let run = null;

/** A seeded uniform generator (mulberry32). */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** n points in [-1, 1]^2 with labels 0/1. */
export function makeData(kind, n, seed = 1, noise = 0.05) {
  const r = rng(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
  const pts = [];
  const labels = [];
  for (let i = 0; i < n; i++) {
    const c = i % 2;
    let x;
    let y;
    if (kind === 'spiral') {
      const t = (Math.floor(i / 2) / (n / 2)) * 2.5 * Math.PI + 0.3;
      const rad = t / (2.5 * Math.PI + 0.3);
      const a = t + c * Math.PI;
      x = rad * Math.sin(a);
      y = rad * Math.cos(a);
    } else if (kind === 'circles') {
      const a = 2 * Math.PI * r();
      const rad = c === 0 ? 0.3 * Math.sqrt(r()) : 0.6 + 0.35 * r();
      x = rad * Math.cos(a);
      y = rad * Math.sin(a);
    } else {
      x = 2 * r() - 1;
      y = 2 * r() - 1;
      if (Math.abs(x) < 0.05) x += x < 0 ? -0.05 : 0.05;
      if (Math.abs(y) < 0.05) y += y < 0 ? -0.05 : 0.05;
      labels.push(x * y > 0 ? 0 : 1);
      pts.push(x + noise * gauss(), y + noise * gauss());
      continue;
    }
    pts.push(x + noise * gauss(), y + noise * gauss());
    labels.push(c);
  }
  return { pts: Float32Array.from(pts), labels: Int32Array.from(labels) };
}

function makeNet(hidden, activation) {
  const layers = [];
  let width = 2;
  for (const h of hidden) {
    layers.push(new bp.nn.Dense(width, h, { activation }));
    width = h;
  }
  layers.push(new bp.nn.Dense(width, 2));
  return new bp.nn.SequentialCell(layers);
}

function makeOptimizer(name, params, lr) {
  if (name === 'sgd') return new bp.optim.SGD(params, { learningRate: lr, momentum: 0.9 });
  if (name === 'adamw') return new bp.optim.AdamW(params, { learningRate: lr });
  return new bp.optim.Adam(params, { learningRate: lr });
}

const GRID = 48;

function start(config) {
  if (run) run.stop = true;
  bp.nn.setSeed(config.seed ?? 1);
  const data = makeData(config.dataset, config.n ?? 300, config.seed ?? 1);
  const net = makeNet(config.hidden, config.activation);
  const optimizer = makeOptimizer(config.optimizer, net.trainableParams(), config.lr);
  const step = new bp.nn.TrainOneStepCell(new bp.nn.WithLossCell(net, new bp.nn.CrossEntropyLoss()), optimizer);
  const x = bp.keep(bp.tensor(data.pts, { shape: [data.labels.length, 2] }));
  const y = bp.keep(bp.tensor(data.labels, { shape: [data.labels.length] }));
  const grid = new Float32Array(GRID * GRID * 2);
  for (let i = 0; i < GRID; i++) {
    for (let j = 0; j < GRID; j++) {
      grid[(i * GRID + j) * 2] = -1.2 + (2.4 * (j + 0.5)) / GRID;
      grid[(i * GRID + j) * 2 + 1] = 1.2 - (2.4 * (i + 0.5)) / GRID;
    }
  }
  const g = bp.keep(bp.tensor(grid, { shape: [GRID * GRID, 2] }));
  postMessage({ type: 'data', points: data.pts, labels: data.labels });
  run = { stop: false, paused: false, net, step, x, y, g, steps: 0, started: performance.now(), trainMs: 0 };
  const cur = run;
  const tick = () => {
    if (cur.stop) {
      for (const t of [cur.x, cur.y, cur.g]) t.dispose();
      return;
    }
    if (cur.paused) return;
    try {
      const t0 = performance.now();
      let loss = NaN;
      let k = 0;
      while (performance.now() - t0 < 60) {
        loss = bp.tidy(() => cur.step(cur.x, cur.y).item());
        k++;
        cur.steps++;
      }
      cur.trainMs += performance.now() - t0;
      const { acc, boundary } = bp.tidy(() => {
        cur.net.setTrain(false);
        const pred = cur.net(cur.x).argmax({ axis: 1 }).data();
        let ok = 0;
        for (let i = 0; i < pred.length; i++) ok += pred[i] === data.labels[i] ? 1 : 0;
        const p = cur.net(cur.g).softmax({ axis: 1 }).data();
        const b = new Float32Array(GRID * GRID);
        for (let i = 0; i < b.length; i++) b[i] = p[i * 2 + 1];
        cur.net.setTrain(true);
        return { acc: ok / pred.length, boundary: b };
      });
      postMessage({
        type: 'progress',
        steps: cur.steps,
        loss,
        acc,
        stepsPerSec: (cur.steps / cur.trainMs) * 1000,
        elapsedMs: performance.now() - cur.started,
        boundary,
        grid: GRID,
      });
      setTimeout(tick, 0);
    } catch (e) {
      postMessage({ type: 'error', message: `${e.name}: ${e.message}` });
    }
  };
  cur.tick = tick;
  setTimeout(tick, 0);
}

onmessage = (ev) => {
  const m = ev.data;
  try {
    if (m.type === 'start') start(m.config);
    else if (m.type === 'pause' && run) run.paused = true;
    else if (m.type === 'resume' && run && run.paused) {
      run.paused = false;
      setTimeout(run.tick, 0);
    }
  } catch (e) {
    postMessage({ type: 'error', message: `${e.name}: ${e.message}` });
  }
};

postMessage({ type: 'ready' });
