// The benchmark workloads W1..W7 through TensorFlow.js 4.22 in Node, on its `cpu` (plain JavaScript) or `wasm`
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
  W6,
  w6Inputs,
  sym,
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

/**
 * W6: the contract's GPT composed from tf ops (TensorFlow.js has no attention layer): embeddings, 4 pre-norm blocks
 * of causal multi-head attention (softmax(q k^T / sqrt(d) + mask) v) and a gelu MLP (erf form), a final layer norm,
 * an untied head, softmax cross-entropy over every token. TensorFlow.js has no AdamW: tf.train.adam(3e-4), without
 * weight decay (a little less work than the contract's step); the token embedding is a one-hot matmul (its wasm
 * backend lacks the kernel of gather's gradient).
 */
function w6() {
  const { batch: B, context: T, vocab: V, width: C, heads: H, layers: L } = W6;
  const D = C / H;
  const inp = w6Inputs();
  // The embedding as one-hot rows times the table: the wasm backend has no UnsortedSegmentSum, gather's gradient.
  const idsOneHot = tf.tidy(() => tf.cast(tf.oneHot(tf.tensor1d(inp.x, 'int32'), V), 'float32'));
  const y = tf.tidy(() => tf.cast(tf.oneHot(tf.tensor1d(inp.y, 'int32'), V), 'float32'));
  let seed = 600;
  const v = (name, shape, scale) => {
    const n = shape.reduce((a, b) => a * b, 1);
    const data = scale === 'ones' ? new Float32Array(n).fill(1) : scale === 0 ? new Float32Array(n) : sym(seed++, n, scale);
    return tf.variable(tf.tensor(data, shape, 'float32'), true, `${IMPL}-w6-${name}`);
  };
  const P = { wte: v('wte', [V, C], 0.035), wpe: v('wpe', [T, C], 0.035), lnfG: v('lnfG', [C], 'ones'), lnfB: v('lnfB', [C], 0), head: v('head', [C, V], 0.035) };
  const blocks = [];
  for (let l = 0; l < L; l++) {
    blocks.push({
      ln1G: v(`ln1G${l}`, [C], 'ones'), ln1B: v(`ln1B${l}`, [C], 0),
      wqkv: v(`wqkv${l}`, [C, 3 * C], 0.035), bqkv: v(`bqkv${l}`, [3 * C], 0),
      wo: v(`wo${l}`, [C, C], 0.012), bo: v(`bo${l}`, [C], 0),
      ln2G: v(`ln2G${l}`, [C], 'ones'), ln2B: v(`ln2B${l}`, [C], 0),
      w1: v(`w1${l}`, [C, 4 * C], 0.035), b1: v(`b1${l}`, [4 * C], 0),
      w2: v(`w2${l}`, [4 * C, C], 0.012), b2: v(`b2${l}`, [C], 0),
    });
  }
  const params = [...Object.values(P), ...blocks.flatMap((b) => Object.values(b))];
  const mask = tf.tidy(() => tf.mul(tf.sub(1, tf.linalg.bandPart(tf.ones([T, T]), -1, 0)), -1e9));
  const layerNorm = (x, g, b) => {
    const { mean, variance } = tf.moments(x, -1, true);
    return tf.add(tf.mul(tf.div(tf.sub(x, mean), tf.sqrt(tf.add(variance, 1e-5))), g), b);
  };
  const gelu = (x) => tf.mul(tf.mul(x, 0.5), tf.add(1, tf.erf(tf.mul(x, Math.SQRT1_2))));
  const lossFn = () => {
    let x = tf.add(tf.reshape(tf.matMul(idsOneHot, P.wte), [B, T, C]), P.wpe); // (B, T, C)
    for (const b of blocks) {
      const h = tf.reshape(layerNorm(x, b.ln1G, b.ln1B), [B * T, C]);
      const qkv = tf.reshape(tf.fused.matMul({ a: h, b: b.wqkv, bias: b.bqkv }), [B, T, 3, H, D]);
      const [q, k, vv] = tf.split(qkv, 3, 2).map((t) => tf.transpose(tf.reshape(t, [B, T, H, D]), [0, 2, 1, 3]));
      const scores = tf.add(tf.mul(tf.matMul(q, k, false, true), 1 / Math.sqrt(D)), mask);
      const att = tf.reshape(tf.transpose(tf.matMul(tf.softmax(scores), vv), [0, 2, 1, 3]), [B * T, C]);
      x = tf.add(x, tf.reshape(tf.fused.matMul({ a: att, b: b.wo, bias: b.bo }), [B, T, C]));
      const h2 = tf.reshape(layerNorm(x, b.ln2G, b.ln2B), [B * T, C]);
      const m = tf.fused.matMul({ a: gelu(tf.fused.matMul({ a: h2, b: b.w1, bias: b.b1 })), b: b.w2, bias: b.b2 });
      x = tf.add(x, tf.reshape(m, [B, T, C]));
    }
    const logits = tf.matMul(tf.reshape(layerNorm(x, P.lnfG, P.lnfB), [B * T, C]), P.head);
    return tf.losses.softmaxCrossEntropy(y, logits);
  };
  const optimizer = tf.train.adam(3e-4);
  const losses = [];
  const step = () => {
    const cost = optimizer.minimize(lossFn, true, params);
    losses.push(cost.dataSync()[0]);
    cost.dispose();
  };
  try {
    const [warmup, timed] = R.W6;
    step();
    const before = tf.memory().numTensors;
    const stats = summarize(timeMs([warmup - 1, timed], step));
    const check = { ...checkTraining(losses, V), ...memoryCheck(before) };
    check.ok = check.ok && check.memory_flat;
    emit(IMPL, 'W6', 'ms_per_step', stats, { check, optimizer: 'adam (TensorFlow.js has no AdamW)' });
  } finally {
    tf.dispose([idsOneHot, y, mask, ...params]);
    optimizer.dispose();
  }
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
if (opts.want('W6')) run('W6', w6);
