// bp.nn and bp.optim over the WebAssembly build: a JavaScript Cell holding the core's layers trained to a
// loss threshold, the layers, losses, initializers, optimizers and schedules, train/eval mode, and errors.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

import { init, ShapeError, ValueError } from '../../web/index.js';
import { rng as mulberry32 } from '../../demos/web/toy-data.js';
import { liveTensors } from './memory.mjs';

const bp = await init();

const near = (got, want, tol = 1e-6) =>
  assert.ok(Math.abs(got - want) <= tol * (1 + Math.abs(want)), `got ${got}, want ${want}`);
const nearArrays = (got, want, tol = 1e-6) => {
  assert.equal(got.length, want.length);
  for (let i = 0; i < got.length; ++i) near(got[i], want[i], tol);
};


/** A seeded 2-D spiral of `classes` arms, `perClass` points each, with a little noise. */
function spiral(perClass, classes, seed) {
  const rand = mulberry32(seed);
  const xs = new Float32Array(perClass * classes * 2);
  const ys = new Int32Array(perClass * classes);
  let k = 0;
  for (let c = 0; c < classes; ++c) {
    for (let i = 0; i < perClass; ++i, ++k) {
      const r = i / perClass;
      const t = (c * 4 + 4 * r) + (rand() - 0.5) * 0.4;
      xs[2 * k] = r * Math.sin(t);
      xs[2 * k + 1] = r * Math.cos(t);
      ys[k] = c;
    }
  }
  return { x: bp.tensor(xs, { shape: [perClass * classes, 2] }), y: bp.tensor(ys) };
}

class Classifier extends bp.nn.Cell {
  constructor(hidden, classes) {
    super();
    this.fc1 = new bp.nn.Dense(2, hidden);
    this.relu = new bp.nn.ReLU();
    this.fc2 = new bp.nn.Dense(hidden, classes);
  }
  construct(x) {
    return this.fc2(this.relu(this.fc1(x)));
  }
}

test('training: a bp.nn.Cell (Dense-ReLU-Dense) learns a spiral with Adam; memory stays flat', () => {
  bp.nn.setSeed(1);
  const { x, y } = spiral(100, 3, 7);
  const net = new Classifier(64, 3);
  const lossFn = new bp.nn.CrossEntropyLoss();
  const optimizer = new bp.optim.Adam(net.trainableParams(), { learningRate: 0.02 });
  assert.deepEqual(
    net.parametersAndNames().map(([n]) => n),
    ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias'],
  );
  const forward = (xb, yb) => lossFn(net(xb), yb);
  const trainStep = bp.valueAndGrad(forward, { gradPosition: null, weights: optimizer.parameters });
  const first = bp.tidy(() => forward(x, y).item());
  let before;
  let loss;
  const steps = 400;
  for (let i = 0; i < steps; ++i) {
    loss = bp.tidy(() => {
      const [l, grads] = trainStep(x, y);
      optimizer.step(grads);
      return l.item();
    });
    if (i === 10) before = liveTensors(bp);
  }
  assert.deepEqual(liveTensors(bp), before, 'no tensor is left behind by a training step');
  assert.equal(optimizer.stepCount, steps);
  assert.ok(first > 1.0, `initial loss ${first}`);
  assert.ok(loss < 0.1, `loss after ${steps} steps: ${loss}`);
  const accuracy = bp.tidy(() => {
    net.setTrain(false);
    const predicted = net(x).argmax(1).cast('int32');
    return predicted.equal(y).cast('float32').mean().item();
  });
  assert.ok(accuracy > 0.95, `training accuracy ${accuracy}`);
});

test('training: WithLossCell + TrainOneStepCell, SGD with momentum, blobs', () => {
  bp.nn.setSeed(3);
  const rand = mulberry32(11);
  const centers = [[-2, 0], [2, 0], [0, 2.5]];
  const n = 90;
  const xs = new Float32Array(n * 2);
  const ys = new Int32Array(n);
  for (let i = 0; i < n; ++i) {
    const c = i % 3;
    xs[2 * i] = centers[c][0] + (rand() - 0.5);
    xs[2 * i + 1] = centers[c][1] + (rand() - 0.5);
    ys[i] = c;
  }
  const x = bp.tensor(xs, { shape: [n, 2] });
  const y = bp.tensor(ys);
  const backbone = new bp.nn.SequentialCell([new bp.nn.Dense(2, 16, { activation: 'relu' }), new bp.nn.Dense(16, 3)]);
  const withLoss = new bp.nn.WithLossCell(backbone, new bp.nn.CrossEntropyLoss());
  const optimizer = new bp.optim.SGD(backbone.trainable_params(), 0.1, { momentum: 0.9 });
  const train = new bp.nn.TrainOneStepCell(withLoss, optimizer);
  assert.deepEqual(
    train.parametersAndNames().map(([k]) => k),
    ['network.backbone.0.weight', 'network.backbone.0.bias', 'network.backbone.1.weight', 'network.backbone.1.bias'],
  );
  let before;
  let loss;
  for (let i = 0; i < 100; ++i) {
    loss = bp.tidy(() => train(x, y).item());
    if (i === 5) before = liveTensors(bp);
  }
  assert.deepEqual(liveTensors(bp), before);
  assert.ok(loss < 0.05, `loss ${loss}`);
  assert.equal(optimizer.name, 'SGD');
  assert.equal(optimizer.updateCount(0), 100);
});

test('seed: the LinearRegressor (Cell with Parameters w, b; BCEWithLogitsLoss; weights = trainable_params())', () => {
  class LinearRegressor extends bp.nn.Cell {
    constructor() {
      super();
      this.w = new bp.Parameter(bp.tensor([[0.5], [-0.5]]), 'w');
      this.b = new bp.Parameter(bp.zeros([1]), 'b');
    }
    construct(x) {
      return bp.ops.matmul(x, this.w).add(this.b);
    }
  }
  const net = new LinearRegressor();
  const loss = new bp.nn.BCEWithLogitsLoss();
  const x = bp.tensor([[1, 2], [-1, 0.5], [2, -1], [0, -2]]);
  const y = bp.tensor([[1], [0], [1], [0]]);
  const fn = (a, b) => loss(net(a), b);
  const step = bp.valueAndGrad(fn, { gradPosition: null, weights: net.trainable_params() });
  const [l0, [gw, gb]] = step(x, y);
  // Reference: mean over i of softplus(z_i) - y_i z_i with z = x w + b.
  const xs = [[1, 2], [-1, 0.5], [2, -1], [0, -2]];
  const ys = [1, 0, 1, 0];
  const z = xs.map(([a, b]) => 0.5 * a - 0.5 * b);
  const sig = (v) => 1 / (1 + Math.exp(-v));
  near(l0.item(), z.reduce((s, v, i) => s + Math.log1p(Math.exp(v)) - ys[i] * v, 0) / 4, 1e-6);
  const dz = z.map((v, i) => (sig(v) - ys[i]) / 4);
  nearArrays(Array.from(gw.dataSync()), [0, 1].map((j) => dz.reduce((s, d, i) => s + d * xs[i][j], 0)), 1e-5);
  near(gb.item(), dz.reduce((s, d) => s + d, 0), 1e-5);
  const opt = new bp.optim.SGD(net.trainableParams(), { lr: 0.5 });
  for (let i = 0; i < 200; ++i) bp.tidy(() => opt.step(step(x, y)[1]));
  assert.ok(bp.tidy(() => fn(x, y).item()) < 0.1);
});

test('cells: parameters and names, nesting, tied weights, setGrad, property access', () => {
  bp.nn.setSeed(0);
  class Block extends bp.nn.Cell {
    constructor() {
      super();
      this.dense = new bp.nn.Dense(3, 4, { hasBias: false });
      this.bn = new bp.nn.BatchNorm1d(4);
    }
    construct(x) {
      return this.bn(this.dense(x));
    }
  }
  class Net extends bp.nn.Cell {
    constructor() {
      super();
      this.scale = new bp.Parameter(bp.ones([4]), 'scale');
      this.block = new Block();
      this.head = new bp.nn.Dense(4, 2);
      this.tied = this.scale;
    }
    construct(x) {
      return this.head(this.block(x).mul(this.scale));
    }
  }
  const net = new Net();
  assert.deepEqual(
    net.parametersAndNames().map(([n]) => n),
    [
      'scale',
      'block.dense.weight',
      'block.bn.gamma',
      'block.bn.beta',
      'block.bn.moving_mean',
      'block.bn.moving_variance',
      'head.weight',
      'head.bias',
      'tied',
    ],
  );
  // Moving statistics are state; a tied parameter is listed once.
  assert.deepEqual(
    net.trainableParams().map((p) => p.name),
    ['scale', 'weight', 'gamma', 'beta', 'weight', 'bias'],
  );
  assert.ok(net.head.weight instanceof bp.Tensor);
  assert.deepEqual(net.head.weight.shape, [2, 4]);
  assert.equal(net.block.bn.movingMean, net.block.bn.moving_mean);
  assert.equal(net.head.bias.requiresGrad, true);
  assert.deepEqual(net.cellsAndNames().map(([n]) => n), ['block', 'block.dense', 'block.bn', 'head']);
  net.setGrad(false);
  assert.deepEqual(net.trainableParams(), []);
  net.setGrad(true);
  assert.equal(net.trainableParams().length, 6);
  assert.equal(net.block.bn.moving_mean.requiresGrad, false);
  assert.deepEqual(bp.tidy(() => net(bp.ones([5, 3])).shape), [5, 2]);
});

test('layers: Dense computes x W^T + b; seeded initializers are reproducible', () => {
  const w = bp.tensor([[1, 2, 3], [4, 5, 6]]);
  const dense = new bp.nn.Dense(3, 2, { weightInit: w, biasInit: 'ones' });
  assert.deepEqual(dense(bp.tensor([[1, 0, -1]])).toArray(), [[-1, -1]]);
  const relu = new bp.nn.Dense(3, 2, w, 'zeros', true, 'relu');
  assert.deepEqual(relu(bp.tensor([[1, 0, -1], [1, 1, 1]])).toArray(), [[0, 0], [6, 15]]);
  const noBias = new bp.nn.Dense(3, 2, { has_bias: false });
  assert.deepEqual(noBias.parametersAndNames().map(([n]) => n), ['weight']);

  bp.nn.setSeed(42);
  const a = new bp.nn.Dense(8, 4);
  bp.nn.setSeed(42);
  const b = new bp.nn.Dense(8, 4);
  const c = new bp.nn.Dense(8, 4);
  assert.deepEqual(a.weight.toArray(), b.weight.toArray());
  assert.notDeepEqual(b.weight.toArray(), c.weight.toArray());
  // Default Dense weights: U(-1/sqrt(in), 1/sqrt(in)).
  assert.ok(Array.from(a.weight.dataSync()).every((v) => Math.abs(v) <= 1 / Math.sqrt(8)));

  assert.deepEqual(bp.nn.initializer('ones', [2, 2]).toArray(), [[1, 1], [1, 1]]);
  assert.deepEqual(bp.nn.initializer(bp.nn.init.constant(3), [2], { dtype: 'float64' }).toArray(), [3, 3]);
  const n1 = bp.nn.initializer(bp.nn.init.normal(0.5, 1, 9), [1000]).dataSync();
  const n2 = bp.nn.initializer(bp.nn.init.normal({ sigma: 0.5, mean: 1, seed: 9 }), [1000]).dataSync();
  assert.deepEqual(n1, n2);
  const mean = n1.reduce((s, v) => s + v, 0) / n1.length;
  near(mean, 1, 0.1);
  const xav = bp.nn.initializer(bp.nn.init.xavierUniform({ seed: 1 }), [10, 6]).dataSync();
  const bound = Math.sqrt(6 / 16);
  assert.ok(xav.every((v) => Math.abs(v) <= bound));
  const he = bp.nn.initializer(bp.nn.init.he_normal({ mode: 'fan_out', nonlinearity: 'relu', seed: 2 }), [64, 32]);
  assert.equal(he.shape[0], 64);
  near(bp.nn.calculateGain('tanh'), 5 / 3);
});

test('training cells are the core\'s: a JavaScript network, hasAux, its errors as thrown, and the reference step', () => {
  class Net extends bp.nn.Cell {
    constructor() {
      super();
      this.fc = new bp.nn.Dense(3, 2, {
        weightInit: bp.tensor([0.1, -0.2, 0.3, 0.4, 0.5, -0.6], { shape: [2, 3] }),
        biasInit: bp.tensor([0.05, -0.05]),
      });
    }
    construct(x, y) {
      const out = this.fc(x);
      if (this.fail) throw this.fail;
      return [bp.ops.mean(bp.ops.square(out.sub(y))), out];
    }
  }
  const x = bp.tensor([1, 2, -1, 0.5, -0.5, 2], { shape: [2, 3] });
  const y = bp.tensor([0.5, -0.5, 1, 0], { shape: [2, 2] });
  // The step by hand: value and gradients, then SGD.
  const ref = new Net();
  const [[refLoss], refGrads] = bp.valueAndGrad((a, b) => ref(a, b), { gradPosition: null, weights: ref.trainableParams(), hasAux: true })(x, y);
  const net = new Net();
  const before = net.fc(x);
  const step = new bp.nn.TrainOneStepCell(net, new bp.optim.SGD(net.trainableParams(), 0.1), { hasAux: true });
  const [loss, out] = step(x, y);
  assert.equal(loss.item(), refLoss.item());
  assert.deepEqual(Array.from(out.dataSync()), Array.from(before.dataSync()), 'the aux output is from before the update');
  const w = Array.from(net.fc.weight.dataSync());
  const w0 = Array.from(ref.fc.weight.dataSync());
  const g = Array.from(refGrads[0].dataSync());
  w.forEach((v, i) => assert.ok(Math.abs(v - (w0[i] - 0.1 * g[i])) < 1e-6, `weight ${i}: ${v}`));
  // An error thrown in the JavaScript network reaches the caller as it was thrown.
  const boom = new RangeError('the network refused');
  net.fail = boom;
  assert.throws(() => step(x, y), (e) => e === boom);
  net.fail = null;
  // Without hasAux the network must return the loss alone: the core's message.
  const plain = new bp.nn.TrainOneStepCell(net, new bp.optim.SGD(net.trainableParams(), 0.1));
  assert.throws(() => plain(x, y), (e) => e instanceof ValueError && /the network must return the loss, got a tuple of 2/.test(e.message));
  // A SequentialCell appended to after a call runs its new cell too.
  const seq = new bp.nn.SequentialCell(new bp.nn.Dense(3, 4));
  assert.deepEqual(seq(x).shape, [2, 4]);
  seq.append(new bp.nn.Dense(4, 1));
  assert.deepEqual(seq(x).shape, [2, 1]);
});

test('training cells of the core do not keep their JavaScript networks alive', () => {
  const entry = new URL('../../web/index.js', import.meta.url).pathname;
  const child = `
    import { init } from ${JSON.stringify(entry)};
    const bp = await init();
    const refs = [];
    (() => {
      for (let i = 0; i < 20; i++) {
        class Net extends bp.nn.Cell {
          constructor() { super(); this.fc = new bp.nn.Dense(2, 1); }
          construct(x) { return bp.ops.sum(this.fc(x)); }
        }
        const net = new Net();
        const step = new bp.nn.TrainOneStepCell(new bp.nn.SequentialCell(net), new bp.optim.SGD(net.trainableParams(), 0.1));
        net.step = step;  // (a network that refers to its step: a cycle through the module unless its path is weak)
        bp.tidy(() => step(bp.ones([3, 2])));
        refs.push(new WeakRef(net));
      }
    })();
    for (let i = 0; i < 30; i++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 10)); }
    console.log(refs.filter((r) => r.deref() !== undefined).length);
  `;
  const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', child], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.ok(Number(r.stdout.trim()) <= 2, `networks still alive: ${r.stdout}`);
});

test('layers: conv, pooling, flatten, layer norm, embedding, activations in a SequentialCell', () => {
  bp.nn.setSeed(5);
  const net = new bp.nn.SequentialCell(
    new bp.nn.Conv2d(1, 2, 3, { padMode: 'pad', padding: 1, hasBias: true }),
    new bp.nn.ReLU(),
    new bp.nn.MaxPool2d(2, 2),
    new bp.nn.AvgPool2d({ kernelSize: 2, stride: 2 }),
    new bp.nn.Flatten(),
    new bp.nn.LayerNorm([8]),
    new bp.nn.Dense(8, 3),
    new bp.nn.GELU(),
    new bp.nn.Softmax(),
  );
  assert.equal(net.length, 9);
  assert.deepEqual(
    net.parametersAndNames().map(([n]) => n),
    ['0.weight', '0.bias', '5.gamma', '5.beta', '6.weight', '6.bias'],
  );
  const out = bp.tidy(() => bp.keep(net(bp.randn([2, 1, 8, 8], 3))));
  assert.deepEqual(out.shape, [2, 3]);
  const rows = out.toArray();
  for (const r of rows) near(r[0] + r[1] + r[2], 1, 1e-5);
  const emb = new bp.nn.Embedding(10, 4, { paddingIdx: 0 });
  const e = emb(bp.tensor([[0, 3], [9, 0]], { dtype: 'int32' }));
  assert.deepEqual(e.shape, [2, 2, 4]);
  assert.deepEqual(e.toArray()[0][0], [0, 0, 0, 0]);
  assert.deepEqual(new bp.nn.Sigmoid()(bp.tensor([0])).toArray(), [0.5]);
  assert.deepEqual(new bp.nn.Tanh()(bp.tensor([0])).toArray(), [0]);
  assert.deepEqual(new bp.nn.LeakyReLU(0.5)(bp.tensor([-2, 2])).toArray(), [-1, 2]);
  near(new bp.nn.LogSoftmax()(bp.tensor([0, 0])).toArray()[0], -Math.log(2));
  near(new bp.nn.SiLU()(bp.tensor([1])).item(), 1 / (1 + Math.exp(-1)));
  assert.ok(net.at(-1) instanceof bp.nn.Softmax);
  assert.equal(net.at(0).constructor.name, 'Conv2d');
});

test('train/eval: Dropout is seeded and off in eval; BatchNorm uses moving statistics in eval', () => {
  class Net extends bp.nn.Cell {
    constructor() {
      super();
      this.drop = new bp.nn.Dropout(0.5, 123);
      this.bn = new bp.nn.BatchNorm1d(2, { momentum: 0.5 });
    }
    construct(x) {
      return this.bn(this.drop(x));
    }
  }
  const net = new Net();
  assert.equal(net.training, true);
  const x = bp.ones([1000]);
  const dropped = net.drop(x).dataSync();
  assert.ok(dropped.every((v) => v === 0 || v === 2));
  const kept = dropped.filter((v) => v === 2).length;
  assert.ok(kept > 400 && kept < 600, `kept ${kept}`);
  const again = new bp.nn.Dropout(0.5, 123)(x).dataSync();
  assert.deepEqual(again, dropped);

  const batch = bp.tensor([[1, 10], [3, 30]]);
  net.bn(batch);
  // moving = 0.5 * moving + 0.5 * batch statistic (unbiased variance).
  assert.deepEqual(net.bn.movingMean.toArray(), [1, 10]);
  assert.deepEqual(net.bn.movingVariance.toArray(), [1.5, 100.5]);
  net.setTrain(false);
  assert.equal(net.training, false);
  assert.equal(net.bn.training, false);
  assert.deepEqual(net.drop(x).toArray(), Array.from(x.dataSync()));
  const y = net.bn(bp.tensor([[1, 10]])).toArray()[0];
  near(y[0], 0, 1e-5);
  near(y[1], 0, 1e-5);
  assert.deepEqual(net.bn.movingMean.toArray(), [1, 10], 'eval mode leaves the statistics alone');
  net.set_train(true);
  assert.equal(net.drop.training, true);
});

test('losses: values against the ops, reductions, weights, label smoothing', () => {
  const logits = bp.tensor([[2, 0, 0], [0, 2, 0], [0, 0, -1]]);
  const labels = bp.tensor([0, 1, 2], { dtype: 'int32' });
  near(new bp.nn.CrossEntropyLoss()(logits, labels).item(), bp.ops.cross_entropy(logits, labels).item());
  assert.deepEqual(new bp.nn.CrossEntropyLoss({ reduction: 'none' })(logits, labels).shape, [3]);
  near(
    new bp.nn.CrossEntropyLoss({ labelSmoothing: 0.1 })(logits, labels).item(),
    bp.ops.cross_entropy(logits, labels, { labelSmoothing: 0.1 }).item(),
  );
  near(
    new bp.nn.CrossEntropyLoss([1, 2, 3], 2)(logits, labels).item(),
    bp.ops.cross_entropy(logits, labels, { weight: bp.tensor([1, 2, 3]), ignoreIndex: 2 }).item(),
  );
  near(new bp.nn.NLLLoss()(logits.logSoftmax(), labels).item(), bp.ops.cross_entropy(logits, labels).item());
  const p = bp.tensor([0.5, 2, -1]);
  const t = bp.tensor([1, 1, 1]);
  near(new bp.nn.MSELoss()(p, t).item(), (0.25 + 1 + 4) / 3);
  near(new bp.nn.L1Loss('sum')(p, t).item(), 0.5 + 1 + 2);
  near(new bp.nn.SmoothL1Loss()(p, t).item(), (0.125 + 0.5 + 1.5) / 3);
  const z = bp.tensor([0, 1]);
  const target = bp.tensor([1, 0]);
  const bce = new bp.nn.BCEWithLogitsLoss('sum', null, [2, 1]);
  near(bce(z, target).item(), 2 * Math.log(2) + Math.log1p(Math.E));
  near(new bp.nn.BCELoss()(bp.tensor([0.5, 0.25]), bp.tensor([1, 0])).item(), (Math.log(2) - Math.log(0.75)) / 2);
});

test('optimizers: SGD, Momentum, Adam and AdamW updates; schedules', () => {
  const p = new bp.Parameter(bp.tensor([1, -2]), 'p');
  const g = bp.tensor([0.5, -1]);
  const sgd = new bp.optim.SGD([p], 0.1);
  sgd.step([g]);
  nearArrays(Array.from(p.dataSync()), [0.95, -1.9]);
  assert.equal(sgd.stepCount, 1);
  sgd.learningRate = 1;
  assert.equal(sgd.learningRate, 1);
  sgd.applyGradients([g]);
  nearArrays(Array.from(p.dataSync()), [0.45, -0.9]);

  const q = new bp.Parameter(bp.tensor([1, 1]), 'q');
  const momentum = new bp.optim.Momentum([q], 0.1, 0.9);
  momentum.step([bp.tensor([1, 2])]);
  momentum.step([bp.tensor([1, 2])]);
  // accum = 1, then 1.9 (and 2, then 3.8): q = 1 - 0.1 * (1 + 1.9), 1 - 0.1 * (2 + 3.8).
  nearArrays(Array.from(q.dataSync()), [0.71, 0.42]);
  assert.deepEqual(Object.keys(momentum.state(0)), ['momentum_buffer']);
  nearArrays(Array.from(momentum.state(0).momentum_buffer.dataSync()), [1.9, 3.8]);
  assert.deepEqual(Object.keys(new bp.optim.Adam([q]).state(0)), []);

  const r = new bp.Parameter(bp.tensor([1, -1, 0.5]), 'r');
  const adam = new bp.optim.Adam([r], { lr: 0.01, betas: [0.9, 0.99] });
  adam.step([bp.tensor([3, -0.1, 0])]);
  // The first Adam step moves each weight by lr * sign(g) (up to eps).
  nearArrays(Array.from(r.dataSync()), [0.99, -0.99, 0.5], 1e-5);
  const s = new bp.Parameter(bp.tensor([2]), 's');
  const adamw = new bp.optim.AdamW([s], 0.1, { weightDecay: 0.5 });
  adamw.step([bp.tensor([0])]);
  nearArrays(Array.from(s.dataSync()), [2 * (1 - 0.1 * 0.5)], 1e-6);

  const step = new bp.optim.StepLR(sgd, 2, 0.5);
  assert.equal(sgd.learningRate, 1);
  step.step();
  step.step();
  assert.equal(step.getLastLr(), 0.5);
  assert.equal(step.lastEpoch, 2);
  assert.equal(sgd.learningRate, 0.5);
  const cosine = new bp.optim.CosineAnnealingLR(adam, { tMax: 10 });
  near(cosine.lrAt(5), 0.005);
  near(cosine.lrAt(10), 0);
  // per-step warmup then cosine (nanoGPT's): base 0.01 (adam's), 4 warmup steps, 12 in all, floor 0.001
  const warm = new bp.optim.WarmupCosineLR(adam, { warmupSteps: 4, totalSteps: 12, etaMin: 0.001 });
  near(adam.learningRate, 0.002);
  near(warm.lrAt(3), 0.008);
  near(warm.lrAt(8), 0.001 + 0.009 * 0.5);
  near(warm.lrAt(40), 0.001);
  warm.step();
  near(adam.learningRate, 0.004);
  assert.throws(() => new bp.optim.WarmupCosineLR(adam, { warmupSteps: 5, totalSteps: 5 }), /WarmupCosineLR/);
});

test('AdamW excludeFromWeightDecay leaves biases and norms undecayed', () => {
  const w = new bp.Parameter(bp.tensor([[2, 4]]), 'w');
  const b = new bp.Parameter(bp.tensor([2, 4]), 'b');
  const opt = new bp.optim.AdamW([w, b], 0.1, { weightDecay: 0.5 }).excludeFromWeightDecay();
  opt.step([bp.zeros([1, 2]), bp.zeros([2])]);
  nearArrays(Array.from(w.dataSync()), [1.9, 3.8], 1e-6);
  assert.deepEqual(Array.from(b.dataSync()), [2, 4]);
  opt.excludeFromWeightDecay(() => true);  // now nothing decays
  opt.step([bp.zeros([1, 2]), bp.zeros([2])]);
  nearArrays(Array.from(w.dataSync()), [1.9, 3.8], 1e-6);
});

test('bp.optim.clipByGlobalNorm scales every gradient by clipNorm / max(norm, clipNorm)', () => {
  const { grads, globalNorm } = bp.optim.clipByGlobalNorm([bp.tensor([3, 4]), bp.tensor([12])], 1);
  near(globalNorm.item(), 13);
  nearArrays(Array.from(grads[0].dataSync()), [3 / 13, 4 / 13], 1e-6);
  nearArrays(Array.from(grads[1].dataSync()), [12 / 13], 1e-6);
  const kept = bp.optim.clipByGlobalNorm([bp.tensor([3, 4])], 10).grads[0];
  assert.deepEqual(Array.from(kept.dataSync()), [3, 4]);
  assert.throws(() => bp.optim.clipByGlobalNorm([bp.tensor([1])], 0), /clip_norm/);
  assert.throws(() => bp.optim.clipByGlobalNorm('x'), bp.ValueError);
});

test('a bp.nn.Cell with a custom bprop still replaces automatic differentiation', () => {
  class ClippedIdentity extends bp.nn.Cell {
    construct(x) {
      return x.mul(1);
    }
    bprop(x, out, dout) {
      return [dout.clamp({ min: -0.5, max: 0.5 })];
    }
  }
  const net = new ClippedIdentity();
  const g = bp.grad((x) => net(x).mul(bp.tensor([1, -3, 0.2])).sum())(bp.tensor([1, 2, 3]));
  nearArrays(Array.from(g.dataSync()), [0.5, -0.5, 0.2]);
});

test('errors: arguments, shapes and optimizer misuse raise clear errors', () => {
  assert.throws(() => new bp.nn.Dense(2), (e) => e instanceof ValueError && /For 'Dense', outChannels is required/.test(e.message));
  assert.throws(() => new bp.nn.Dense(2, 3, { bogus: 1 }), (e) => e instanceof ValueError && /unknown option 'bogus'/.test(e.message));
  assert.throws(() => new bp.nn.Dense(2, 'x'), (e) => e instanceof ValueError && /outChannels must be a number/.test(e.message));
  assert.throws(() => new bp.nn.Dense(0, 3), (e) => e instanceof ValueError && /in_channels must be positive/.test(e.message));
  assert.throws(() => new bp.nn.Dense(2, 3, { activation: 'swish' }), /unknown activation 'swish'/);
  assert.throws(() => new bp.nn.Dense(2, 3, { weightInit: 'nope' }), /unknown name 'nope'/);
  assert.throws(() => new bp.nn.Dense(2, 3, 'zeros', 'zeros', true, '', 'float32', 9), /at most 7 positional/);
  assert.throws(() => new bp.nn.CrossEntropyLoss({ reduction: 'avg' }), (e) => e instanceof ValueError && /reduction/.test(e.message));
  const dense = new bp.nn.Dense(3, 2);
  assert.throws(
    () => dense(bp.ones([4, 5])),
    (e) => e instanceof ShapeError && /For 'Dense', the input's last dimension must equal in_channels = 3/.test(e.message),
  );
  const p = new bp.Parameter(bp.ones([2]), 'p');
  const opt = new bp.optim.Adam([p]);
  assert.throws(() => opt.step([]), (e) => e instanceof ValueError && /For 'Adam', got 0 gradients for 1 parameters/.test(e.message));
  assert.throws(() => opt.step([bp.ones([3])]), (e) => e instanceof ShapeError && /gradient of parameter 'p' has shape/.test(e.message));
  assert.throws(() => new bp.optim.SGD([bp.ones([2])]), /item 0 of params is not a Parameter/);
  assert.throws(() => new bp.optim.SGD([]), /the parameter list is empty/);
  assert.throws(() => new bp.optim.Momentum([p], 0.1), /For 'Momentum', momentum is required/);
  assert.throws(() => new bp.optim.SGD([p], -1), /learning rate must be a finite number >= 0/);
  // An error inside a differentiated function reaches the caller as itself, and nothing leaks.
  const before = liveTensors(bp);
  assert.throws(() => bp.tidy(() => bp.grad((x) => dense(x).sum())(bp.ones([2, 7]))), ShapeError);
  assert.deepEqual(liveTensors(bp), before);
});
