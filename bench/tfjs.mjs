// The benchmark workloads W1..W5 through TensorFlow.js 4.22 in Node, on its `cpu` (plain JavaScript) or `wasm`
// (XNNPACK, SIMD, one thread) backend: one JSON line per workload on stdout, impl "tfjs-cpu" / "tfjs-wasm".
// Usage: node bench/tfjs.mjs --backend cpu|wasm [--quick] [--workloads W1,W3]
//
// Same inputs as every implementation (bench/common.mjs). TensorFlow.js is channels-last, so W4's input is
// (32, 28, 28, 1) (the same bytes as NCHW with one channel), the conv filters are transposed OIHW -> HWIO and
// the dense weight's rows are permuted from (c, h, w) to (h, w, c) flattening order, once, before timing:
// the step-0 loss is the same function of the same numbers.
import { createRequire } from 'node:module';
import path from 'node:path';

import {
  checkElementwise,
  checkMatmulGrad,
  checkScalarChain,
  checkTraining,
  emit,
  emitFailure,
  gflops,
  parseArgs,
  reps,
  summarize,
  timeMs,
  w1Inputs,
  w3Inputs,
  w4Inputs,
  w5Input,
} from './common.mjs';

const argv = process.argv.slice(2);
const bi = argv.indexOf('--backend');
const backend = bi >= 0 ? argv.splice(bi, 2)[1] : 'cpu';
if (backend !== 'cpu' && backend !== 'wasm') throw new Error(`--backend must be cpu or wasm, got ${backend}`);
const IMPL = `tfjs-${backend}`;
const opts = parseArgs(argv);
const R = reps(opts.quick);

// The umbrella package registers the gradients (tfjs-core alone has none) and the cpu backend; its Node
// banner about tfjs-node is silenced.
const require = createRequire(import.meta.url);
const warn = console.warn;
const log = console.log;
console.warn = console.log = () => {};
let tf;
try {
  tf = require('@tensorflow/tfjs');
  if (backend === 'wasm') {
    const wasm = require('@tensorflow/tfjs-backend-wasm');
    // In Node the backend reads its .wasm files from file paths: the package's dist/ folder.
    wasm.setWasmPaths(`${path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm'))}/`);
    tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false); // one thread, like every implementation
  }
  if (!(await tf.setBackend(backend))) throw new Error(`TensorFlow.js backend '${backend}' failed to initialise`);
  await tf.ready();
  if (backend === 'cpu') tf.backend().firstUse = false; // its banner is printed on the first tensor write
} finally {
  console.warn = warn;
  console.log = log;
}

/** Live tensors before and after the timed loop: tf.tidy must keep tf.memory() flat. */
function memoryCheck(before) {
  const after = tf.memory().numTensors;
  return { tensors_before: before, tensors_after: after, memory_flat: after === before };
}

/** W1 and W4: one SGD step (tf.train.sgd minimize: value, gradients, update, all in a tidy) per repetition. */
function trainingStep(workload, lossFn, params) {
  const optimizer = tf.train.sgd(0.01);
  const losses = [];
  const step = () => {
    const cost = optimizer.minimize(lossFn, true, params);
    losses.push(cost.dataSync()[0]);
    cost.dispose();
  };
  // The first warm-up step creates the optimizer's state, so the memory check below sees only per-step tensors.
  const [warmup, timed] = R[workload];
  step();
  const before = tf.memory().numTensors;
  const stats = summarize(timeMs([warmup - 1, timed], step));
  const check = { ...checkTraining(losses), ...memoryCheck(before) };
  check.ok = check.ok && check.memory_flat;
  emit(IMPL, workload, 'ms_per_step', stats, { check });
}

const variable = ({ name, shape, data }) => tf.variable(tf.tensor(data, shape, 'float32'), true, `${IMPL}-${name}`);
// oneHot's float32 dtype argument yields int32 bits on the wasm backend (4.22): cast instead.
const oneHot = (labels) => tf.tidy(() => tf.cast(tf.oneHot(tf.tensor1d(labels, 'int32'), 10), 'float32'));

function w1() {
  const inp = w1Inputs();
  const x = tf.tensor2d(inp.x, [128, 784]);
  const y = oneHot(inp.y);
  const params = inp.params.map(variable);
  const [w1, b1, w2, b2, w3, b3] = params;
  const lossFn = () => {
    const h1 = tf.fused.matMul({ a: x, b: w1, bias: b1, activation: 'relu' });
    const h2 = tf.fused.matMul({ a: h1, b: w2, bias: b2, activation: 'relu' });
    const logits = tf.fused.matMul({ a: h2, b: w3, bias: b3 });
    return tf.losses.softmaxCrossEntropy(y, logits);
  };
  trainingStep('W1', lossFn, params);
  tf.dispose([x, y, ...params]);
}

function w2() {
  const x = tf.scalar(0.5);
  const vg = tf.valueAndGrad((x0) => {
    let y = x0;
    for (let i = 0; i < 10000; ++i) y = tf.add(tf.mul(tf.sin(y), 1.0001), 0.1);
    return y;
  });
  let value = NaN;
  let grad = NaN;
  const ms = timeMs(R.W2, () =>
    tf.tidy(() => {
      const r = vg(x);
      value = r.value.dataSync()[0];
      grad = r.grad.dataSync()[0];
    }),
  );
  x.dispose();
  emit(IMPL, 'W2', 'ns_per_op', summarize(ms.map((t) => (t * 1e6) / 30000)), { check: checkScalarChain(value, grad) });
}

function w3(n) {
  const inp = w3Inputs(n);
  const a = tf.tensor2d(inp.a, [n, n]);
  const b = tf.tensor2d(inp.b, [n, n]);
  const vg = tf.valueAndGrads((p, q) => tf.sum(tf.matMul(p, q)));
  let last = null;
  const stats = summarize(
    timeMs(R.W3, () => {
      if (last) tf.dispose(last);
      const r = vg([a, b]);
      last = [r.value, ...r.grads];
    }),
  );
  const [v, da, db] = last;
  const check = checkMatmulGrad(n, inp.a, inp.b, v.dataSync()[0], da.dataSync(), db.dataSync());
  tf.dispose([...last, a, b]);
  emit(IMPL, 'W3', 'ms', stats, { n, gflops: gflops(n, stats.median), check });
}

/** OIHW -> HWIO. */
function toHWIO(w, [o, i, kh, kw]) {
  const out = new Float32Array(w.length);
  for (let a = 0; a < o; ++a)
    for (let b = 0; b < i; ++b)
      for (let h = 0; h < kh; ++h)
        for (let k = 0; k < kw; ++k) out[((h * kw + k) * i + b) * o + a] = w[((a * i + b) * kh + h) * kw + k];
  return out;
}

function w4() {
  const inp = w4Inputs();
  const x = tf.tensor4d(inp.x, [32, 28, 28, 1]);
  const y = oneHot(inp.y);
  const [c1w, c1b, c2w, c2b, dw, db] = inp.params;
  // Dense rows: NCHW flattening (c, h, w) -> NHWC flattening (h, w, c), C = 32, H = W = 7.
  const dwPerm = new Float32Array(dw.data.length);
  for (let c = 0; c < 32; ++c)
    for (let hw = 0; hw < 49; ++hw)
      for (let j = 0; j < 10; ++j) dwPerm[(hw * 32 + c) * 10 + j] = dw.data[(c * 49 + hw) * 10 + j];
  const params = [
    variable({ name: 'c1w', shape: [3, 3, 1, 16], data: toHWIO(c1w.data, c1w.shape) }),
    variable(c1b),
    variable({ name: 'c2w', shape: [3, 3, 16, 32], data: toHWIO(c2w.data, c2w.shape) }),
    variable(c2b),
    variable({ name: 'dw', shape: [1568, 10], data: dwPerm }),
    variable(db),
  ];
  const [w1, b1, w2, b2, w3, b3] = params;
  const lossFn = () => {
    let h = tf.fused.conv2d({ x, filter: w1, strides: 1, pad: 'same', bias: b1, activation: 'relu' });
    h = tf.maxPool(h, 2, 2, 'valid');
    h = tf.fused.conv2d({ x: h, filter: w2, strides: 1, pad: 'same', bias: b2, activation: 'relu' });
    h = tf.maxPool(h, 2, 2, 'valid');
    const logits = tf.fused.matMul({ a: tf.reshape(h, [32, 1568]), b: w3, bias: b3 });
    return tf.losses.softmaxCrossEntropy(y, logits);
  };
  try {
    trainingStep('W4', lossFn, params);
  } finally {
    tf.dispose([x, y, ...params]);
  }
}

function w5() {
  const xs = w5Input();
  const x = tf.tensor1d(xs);
  const vg = tf.valueAndGrad((t) => tf.sum(tf.mul(tf.tanh(tf.add(tf.mul(t, t), 1)), tf.sigmoid(t))));
  let last = null;
  const stats = summarize(
    timeMs(R.W5, () => {
      if (last) tf.dispose(last);
      const r = vg(x);
      last = [r.value, r.grad];
    }),
  );
  const check = checkElementwise(xs, last[0].dataSync()[0], last[1].dataSync());
  tf.dispose([...last, x]);
  emit(IMPL, 'W5', 'ms', stats, { check });
}

/** Runs a workload; a kernel the backend lacks makes it "unsupported", any other exception an error line. */
function run(workload, body, extra = {}) {
  try {
    body();
  } catch (e) {
    const msg = String(e?.message ?? e);
    emitFailure(IMPL, workload, /not registered for backend|gradient function not found/.test(msg) ? 'unsupported' : 'error', msg, extra);
  }
}

if (opts.want('W1')) run('W1', w1);
if (opts.want('W2')) run('W2', w2);
if (opts.want('W3')) for (const n of [256, 1024]) run('W3', () => w3(n), { n });
if (opts.want('W4')) run('W4', w4);
if (opts.want('W5')) run('W5', w5);
