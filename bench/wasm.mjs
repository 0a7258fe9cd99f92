// The benchmark workloads W1..W7 through the npm package (the WebAssembly build, web/dist/) in Node: one JSON
// line per workload on stdout. Usage: node bench/wasm.mjs [--quick] [--workloads W1,W3] [--jit] [--dtypes float32,bfloat16]
// With --jit (implementation bprop-wasm-jit) each workload's differentiated function is wrapped in bp.jit: traced
// during the warm-up, replayed in the timed repetitions (W1 and W4: the whole training step, update included).
// A half dtype in --dtypes adds W1 and W4 under mixed precision O2 in it (bp.amp.autocast around the forward,
// float32 parameters), lines with "amp":"O2","dtype":...
import { init } from '../web/index.js';
import {
  checkElementwise,
  checkMatmulGrad,
  checkScalarChain,
  checkTraining,
  emit,
  gflops,
  guarded,
  parseArgs,
  reps,
  summarize,
  sym,
  timeMs,
  w1Inputs,
  w3Inputs,
  w4Inputs,
  w5Input,
  W6,
  w6Inputs,
} from './common.mjs';

const jitMode = process.argv.includes('--jit');
const IMPL = jitMode ? 'bprop-wasm-jit' : 'bprop-wasm';
const opts = parseArgs(process.argv.slice(2).filter((a) => a !== '--jit'));
const R = reps(opts.quick);
const bp = await init();

/** fn, or with --jit bp.jit(fn). */
const maybeJit = (fn) => (jitMode ? bp.jit(fn) : fn);
/** With --jit: what the jitted function did (one trace, the rest replays) and the size of its graph. */
const jitInfo = (fn) => {
  if (!jitMode) return {};
  const s = fn.stats();
  return { jit: { traces: s.traces, replays: s.replays, nodes: s.nodes, kernels: s.kernels, compile_s: s.compileSeconds } };
};

/** A parameter holding `data` (the temporary tensor it is copied from is freed). */
function parameter({ name, shape, data }) {
  const t = bp.tensor(data, { shape });
  const p = new bp.Parameter(t, name);
  t.dispose();
  return p;
}

/** Live tensors before and after the timed loop: a leak shows as growth. */
function memoryCheck(before) {
  const after = bp.memory().tensors;
  return { tensors_before: before, tensors_after: after, memory_flat: after === before };
}

/**
 * W1 and W4: value_and_grad of the loss w.r.t. the parameters, then p -= lr * g, one step per repetition. With
 * --jit the whole step, update included (Parameter.assign inside the traced function is part of the graph), is
 * one jitted call.
 */
function trainingStep(workload, lossFn, x, y, params, half) {
  const forward = half ? (xs, ys) => bp.amp.autocast('O2', half, () => lossFn(xs, ys)) : lossFn;
  const vg = bp.valueAndGrad(forward, { gradPosition: null, weights: params });
  const update = (grads) => grads.forEach((g, i) => params[i].assign(params[i].sub(g.mul(0.01))));
  const step = jitMode
    ? bp.jit((xs, ys) => {
        const [loss, grads] = vg(xs, ys);
        update(grads);
        return loss;
      })
    : (xs, ys) => {
        const [loss, grads] = vg(xs, ys);
        update(grads);
        return loss;
      };
  const losses = [];
  // With --jit counted after the first call: the graph's constants and the buffers its replays reuse live as long
  // as the jitted function.
  let before = jitMode ? null : bp.memory().tensors;
  const stats = summarize(
    timeMs(R[workload], () => {
      if (before === null && losses.length === 1) before = bp.memory().tensors;
      bp.tidy(() => {
        losses.push(step(x, y).item());
      });
    }),
  );
  const check = { ...checkTraining(losses), ...memoryCheck(before) };
  check.ok = check.ok && check.memory_flat;
  const precision = half ? { amp: 'O2', dtype: half } : {};
  emit(IMPL, workload, 'ms_per_step', stats, { ...precision, gemm: bp.gemmKernel, check, ...jitInfo(step) });
  params.forEach((p) => p.dispose());
  x.dispose();
  y.dispose();
}

function w1(half) {
  const inp = w1Inputs();
  const x = bp.tensor(inp.x, { shape: [128, 784] });
  const y = bp.tensor(inp.y, { shape: [128] });
  const params = inp.params.map(parameter);
  const [w1, b1, w2, b2, w3, b3] = params;
  const lossFn = (xs, ys) => {
    const h1 = xs.matmul(w1).add(b1).relu();
    const h2 = h1.matmul(w2).add(b2).relu();
    return h2.matmul(w3).add(b3).crossEntropy(ys);
  };
  trainingStep('W1', lossFn, x, y, params, half);
}

function w2() {
  const x = bp.scalar(0.5);
  const vg = maybeJit(bp.valueAndGrad((x0) => {
    let y = x0;
    for (let i = 0; i < 10000; ++i) y = y.sin().mul(1.0001).add(0.1);
    return y;
  }));
  let value = NaN;
  let grad = NaN;
  const ms = timeMs(R.W2, () =>
    bp.tidy(() => {
      const [v, g] = vg(x);
      value = v.item();
      grad = g.item();
    }),
  );
  emit(IMPL, 'W2', 'ns_per_op', summarize(ms.map((t) => (t * 1e6) / 30000)), {
    check: checkScalarChain(value, grad),
    ...jitInfo(vg),
  });
}

function w3(n) {
  const inp = w3Inputs(n);
  const a = bp.tensor(inp.a, { shape: [n, n] });
  const b = bp.tensor(inp.b, { shape: [n, n] });
  const vg = maybeJit(bp.valueAndGrad((x, y) => x.matmul(y).sum(), { gradPosition: [0, 1] }));
  let last = null;
  const stats = summarize(
    timeMs(R.W3, () => {
      if (last) last.forEach((t) => t.dispose());
      const [v, [da, db]] = vg(a, b);
      last = [v, da, db];
    }),
  );
  const [v, da, db] = last;
  const check = checkMatmulGrad(n, inp.a, inp.b, v.item(), da.dataSync(), db.dataSync());
  last.forEach((t) => t.dispose());
  a.dispose();
  b.dispose();
  emit(IMPL, 'W3', 'ms', stats, { n, gflops: gflops(n, stats.median), gemm: bp.gemmKernel, check, ...jitInfo(vg) });
}

function w4(half) {
  const inp = w4Inputs();
  const x = bp.tensor(inp.x, { shape: [32, 1, 28, 28] });
  const y = bp.tensor(inp.y, { shape: [32] });
  const params = inp.params.map(parameter);
  const [c1w, c1b, c2w, c2b, dw, db] = params;
  const lossFn = (xs, ys) => {
    let h = xs.conv2d(c1w, c1b, { padding: 1 }).relu().maxPool2d(2);
    h = h.conv2d(c2w, c2b, { padding: 1 }).relu().maxPool2d(2);
    return h.reshape([32, 32 * 7 * 7]).matmul(dw).add(db).crossEntropy(ys);
  };
  trainingStep('W4', lossFn, x, y, params, half);
}

function w5() {
  const xs = w5Input();
  const x = bp.tensor(xs, { shape: [xs.length] });
  const vg = maybeJit(bp.valueAndGrad((t) => t.mul(t).add(1).tanh().mul(t.sigmoid()).sum()));
  let last = null;
  const stats = summarize(
    timeMs(R.W5, () => {
      if (last) last.forEach((t) => t.dispose());
      last = vg(x);
    }),
  );
  const check = checkElementwise(xs, last[0].item(), last[1].dataSync());
  last.forEach((t) => t.dispose());
  x.dispose();
  emit(IMPL, 'W5', 'ms', stats, { check, ...jitInfo(vg) });
}

/**
 * W6: one AdamW step (lr 3e-4, weight decay 0.1 on matrices only) of the contract's GPT (bp.nn.GPT, untied head);
 * with --jit the whole step in one jitted call.
 */
function w6(half) {
  const inp = w6Inputs();
  const x = bp.tensor(inp.x, { shape: [W6.batch, W6.context] });
  const y = bp.tensor(inp.y, { shape: [W6.batch, W6.context] });
  bp.nn.setSeed(61);
  const gpt = new bp.nn.GPT({ vocabSize: W6.vocab, context: W6.context, layers: W6.layers, heads: W6.heads, width: W6.width, tieWeights: false });
  const params = gpt.trainableParams();
  const adamw = new bp.optim.AdamW(params, { learningRate: 3e-4, weightDecay: 0.1 });
  adamw.excludeFromWeightDecay();
  const forward = half ? (a, b) => bp.amp.autocast('O2', half, () => gpt(a, b)) : (a, b) => gpt(a, b);
  const vg = bp.valueAndGrad(forward, { gradPosition: null, weights: params });
  const whole = (a, b) => {
    const [loss, grads] = vg(a, b);
    adamw.step(grads);
    return loss;
  };
  const step = jitMode ? bp.jit(whole) : whole;
  const losses = [];
  let before = null;
  const stats = summarize(
    timeMs(R.W6, () => {
      if (before === null && losses.length === 1) before = bp.memory().tensors;  // after the optimizer's state
      bp.tidy(() => {
        losses.push(step(x, y).item());
      });
    }),
  );
  const check = { ...checkTraining(losses, W6.vocab), ...memoryCheck(before) };
  check.ok = check.ok && check.memory_flat;
  const precision = half ? { amp: 'O2', dtype: half } : {};
  emit(IMPL, 'W6', 'ms_per_step', stats, { ...precision, gemm: bp.gemmKernel, check, ...jitInfo(step) });
  x.dispose();
  y.dispose();
}

/** W7: one forward + backward of causal scaled_dot_product_attention, 8 heads, E = 64, L = S = n. */
function w7(n) {
  const shape = [1, 8, n, 64];
  const count = 8 * n * 64;
  const [q, k, v] = [71, 72, 73].map((seed) => bp.tensor(sym(seed, count, 1.0), { shape }));
  const vg = maybeJit(bp.valueAndGrad((a, b, c) => bp.ops.scaledDotProductAttention(a, b, c, null, { isCausal: true }).sum(),
    { gradPosition: [0, 1, 2] }));
  let last = null;
  const dispose = () => last && [last[0], ...last[1]].forEach((t) => t.dispose());
  const stats = summarize(timeMs(n > 1024 ? R.W7big : R.W7, () => {
    dispose();
    last = vg(q, k, v);
  }));
  // each probability row sums to 1: d sum(out) / dv sums to 8 n 64
  const dvSum = last[1][2].dataSync().reduce((a, b) => a + b, 0);
  const want = count;
  const check = { ok: Math.abs(dvSum - want) <= 1e-4 * want, dv_sum: dvSum,
    message: `sum(dv) ${dvSum} (every probability row sums to 1: ${want})` };
  dispose();
  [q, k, v].forEach((t) => t.dispose());
  emit(IMPL, 'W7', 'ms', stats, { n, check, ...jitInfo(vg) });
}

// Float32 rows, then each half dtype's W1, W4 and W6.
for (const dtype of opts.dtypes) {
  const half = dtype === 'float32' ? null : dtype;
  const precision = half ? { amp: 'O2', dtype: half } : {};
  if (opts.want('W1')) guarded(IMPL, 'W1', () => w1(half), precision);
  if (half) {
    if (opts.want('W4')) guarded(IMPL, 'W4', () => w4(half), precision);
    if (opts.want('W6')) guarded(IMPL, 'W6', () => w6(half), precision);
    continue;
  }
  if (opts.want('W2')) guarded(IMPL, 'W2', w2);
  if (opts.want('W3')) for (const n of [256, 1024]) guarded(IMPL, 'W3', () => w3(n), { n });
  if (opts.want('W4')) guarded(IMPL, 'W4', w4);
  if (opts.want('W5')) guarded(IMPL, 'W5', w5);
  if (opts.want('W6')) guarded(IMPL, 'W6', () => w6(null));
  if (opts.want('W7')) for (const n of [1024, 4096]) guarded(IMPL, 'W7', () => w7(n), { n });
}
