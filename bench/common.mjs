// What the JavaScript benchmark programs share: the fixed-seed input generator (identical to the one in
// bench/native/bench_native.cpp and bench/torch_bench.py), the repetition counts, timing, statistics, the
// reference checks, and the JSON lines.

// ---- inputs ------------------------------------------------------------------------------------------------

/**
 * A 32-bit LCG (Numerical Recipes constants); each draw keeps the top 24 bits, so every generated value is an
 * exact float32 and every implementation builds bit-identical inputs.
 */
function* lcg24(seed) {
  let s = seed >>> 0;
  for (;;) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    yield s >>> 8;
  }
}

/** Uniform in [0, 1): k / 2^24. */
export function unit(seed, n) {
  const out = new Float32Array(n);
  const g = lcg24(seed);
  for (let i = 0; i < n; ++i) out[i] = g.next().value * 2 ** -24;
  return out;
}

/** Uniform in [-a, a): (k / 2^23 - 1) * a, rounded once to float32 (the product is exact in a double). */
export function sym(seed, n, a) {
  const out = new Float32Array(n);
  const a32 = Math.fround(a);
  const g = lcg24(seed);
  for (let i = 0; i < n; ++i) out[i] = (g.next().value * 2 ** -23 - 1) * a32;
  return out;
}

/** Class labels in [0, classes): k mod classes. */
export function labels(seed, n, classes) {
  const out = new Int32Array(n);
  const g = lcg24(seed);
  for (let i = 0; i < n; ++i) out[i] = g.next().value % classes;
  return out;
}

/** W6's token ids and targets (batch 16, context 128, vocabulary 96), as every implementation draws them. */
export const W6 = { batch: 16, context: 128, vocab: 96, width: 128, heads: 4, layers: 4 };
export const w6Inputs = () => ({ x: labels(62, W6.batch * W6.context, W6.vocab), y: labels(63, W6.batch * W6.context, W6.vocab) });

/** PyTorch's default init bound 1 / sqrt(fan_in), as float32. */
export const fanScale = (fanIn) => Math.fround(1 / Math.sqrt(fanIn));

/** The inputs of W1: x (128, 784), labels (128), and the six parameters (weights stored (in, out)). */
export function w1Inputs() {
  return {
    x: unit(11, 128 * 784),
    y: labels(12, 128, 10),
    params: [
      { name: 'w1', shape: [784, 512], data: sym(13, 784 * 512, fanScale(784)) },
      { name: 'b1', shape: [512], data: sym(14, 512, fanScale(784)) },
      { name: 'w2', shape: [512, 256], data: sym(15, 512 * 256, fanScale(512)) },
      { name: 'b2', shape: [256], data: sym(16, 256, fanScale(512)) },
      { name: 'w3', shape: [256, 10], data: sym(17, 256 * 10, fanScale(256)) },
      { name: 'b3', shape: [10], data: sym(18, 10, fanScale(256)) },
    ],
  };
}

/** The inputs of W4 in NCHW / OIHW layout: x (32, 1, 28, 28), labels (32), conv and dense parameters. */
export function w4Inputs() {
  return {
    x: unit(41, 32 * 28 * 28),
    y: labels(48, 32, 10),
    params: [
      { name: 'c1w', shape: [16, 1, 3, 3], data: sym(42, 16 * 9, fanScale(9)) },
      { name: 'c1b', shape: [16], data: sym(43, 16, fanScale(9)) },
      { name: 'c2w', shape: [32, 16, 3, 3], data: sym(44, 32 * 16 * 9, fanScale(144)) },
      { name: 'c2b', shape: [32], data: sym(45, 32, fanScale(144)) },
      { name: 'dw', shape: [1568, 10], data: sym(46, 1568 * 10, fanScale(1568)) },
      { name: 'db', shape: [10], data: sym(47, 10, fanScale(1568)) },
    ],
  };
}

export const w3Inputs = (n) => ({ a: sym(31, n * n, 1), b: sym(32, n * n, 1) });
export const w5Input = () => sym(51, 1000000, 2);

// ---- repetitions ---------------------------------------------------------------------------------------

/** [warm-up, timed] per workload; --quick is a smoke run, not a measurement. */
export function reps(quick) {
  return quick
    ? { W1: [1, 3], W2: [1, 2], W3: [1, 3], W4: [1, 3], W5: [1, 3], W6: [1, 2], W7: [1, 2], W7big: [0, 1] }
    : { W1: [5, 30], W2: [2, 10], W3: [3, 10], W4: [3, 20], W5: [3, 20], W6: [3, 20], W7: [2, 5], W7big: [1, 3] };
}

/**
 * Command-line options of every benchmark program: --quick, --workloads W1,W3, --dtypes float32,bfloat16 (the
 * precisions to run: float32 rows, and the half rows of bench/README.md).
 */
export function parseArgs(argv = process.argv.slice(2)) {
  const opts = { quick: false, workloads: null, dtypes: ['float32'] };
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === '--quick') opts.quick = true;
    else if (argv[i] === '--workloads') opts.workloads = new Set(argv[++i].split(','));
    else if (argv[i] === '--dtypes') opts.dtypes = argv[++i].split(',');
    else throw new Error(`unknown argument ${argv[i]} (--quick, --workloads W1,W2,W3,W4,W5,W6,W7, --dtypes float32,bfloat16)`);
  }
  for (const d of opts.dtypes) {
    if (!['float32', 'bfloat16', 'float16'].includes(d)) throw new Error(`--dtypes takes float32, bfloat16 and float16, got ${d}`);
  }
  opts.want = (w) => !opts.workloads || opts.workloads.has(w);
  return opts;
}

// ---- timing --------------------------------------------------------------------------------------------

/** Runs body warm-up + timed times; returns the timed durations in milliseconds. */
export function timeMs([warmup, timed], body) {
  for (let i = 0; i < warmup; ++i) body();
  const out = [];
  for (let i = 0; i < timed; ++i) {
    const t0 = performance.now();
    body();
    out.push(performance.now() - t0);
  }
  return out;
}

export function summarize(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return {
    median: s.length % 2 ? s[m] : 0.5 * (s[m - 1] + s[m]),
    min: s[0],
    max: s[s.length - 1],
    reps: s.length,
  };
}

/** Prints one result line (JSON) on stdout. */
export function emit(impl, workload, metric, stats, extra = {}) {
  const { n, ...rest } = extra;
  const line = { impl, workload, ...(n !== undefined ? { n } : {}), metric, ...stats, ...rest };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/** Prints a line for a workload that could not run: `unsupported` (the peer lacks a feature) or an error. */
export function emitFailure(impl, workload, kind, message, extra = {}) {
  process.stdout.write(`${JSON.stringify({ impl, workload, ...extra, [kind]: message })}\n`);
}

/** Runs one workload, turning an exception into an error line so the others still run. */
export function guarded(impl, workload, body, extra = {}) {
  try {
    body();
  } catch (e) {
    emitFailure(impl, workload, 'error', String(e?.message ?? e), extra);
  }
}

// ---- reference checks --------------------------------------------------------------------------------------

const fmt = (v) => Number(v).toPrecision(9);

/** W1 / W4: the step-0 loss is near ln 10 and the loss decreases under SGD. */
export function checkTraining(losses, classes = 10) {
  const loss0 = losses[0];
  const last = losses[losses.length - 1];
  const ok = Number.isFinite(loss0) && Number.isFinite(last) && last < loss0 && Math.abs(loss0 - Math.log(classes)) < 1;
  return {
    ok,
    loss0,
    loss_last: last,
    steps: losses.length,
    message: ok ? `step-0 loss ${fmt(loss0)}, decreasing` : `loss not finite or not decreasing: ${fmt(loss0)} -> ${fmt(last)}`,
  };
}

/** W2: the value of the chain and its gradient against a float64 reference. */
export function checkScalarChain(value, grad) {
  let ry = 0.5;
  let rg = 1;
  for (let i = 0; i < 10000; ++i) {
    rg *= 1.0001 * Math.cos(ry);
    ry = Math.sin(ry) * 1.0001 + 0.1;
  }
  const ok = Math.abs(value - ry) < 1e-4 && Math.abs(grad - rg) < 1e-6;
  return { ok, value, grad, message: `value ${fmt(value)} (reference ${fmt(ry)}), gradient ${fmt(grad)} (reference ${fmt(rg)})` };
}

/** W3: dA = ones @ B^T (every row is B's row sums), dB = A^T @ ones (every column is A's column sums), the value. */
export function checkMatmulGrad(n, a, b, value, dA, dB) {
  const rowsumB = new Float64Array(n);
  const colsumA = new Float64Array(n);
  for (let i = 0; i < n; ++i) {
    for (let k = 0; k < n; ++k) {
      rowsumB[i] += b[i * n + k];
      colsumA[k] += a[i * n + k];
    }
  }
  let errA = 0;
  let errB = 0;
  for (let i = 0; i < n; ++i) {
    for (let k = 0; k < n; ++k) {
      errA = Math.max(errA, Math.abs(dA[i * n + k] - rowsumB[k]));
      errB = Math.max(errB, Math.abs(dB[i * n + k] - colsumA[i]));
    }
  }
  let ref = 0;
  let scale = 0;
  for (let k = 0; k < n; ++k) {
    ref += colsumA[k] * rowsumB[k];
    scale += Math.abs(colsumA[k] * rowsumB[k]);
  }
  const tol = 1e-5 * n;
  const ok = errA < tol && errB < tol && Math.abs(value - ref) <= 1e-4 * scale;
  return {
    ok,
    max_err_dA: errA,
    max_err_dB: errB,
    value,
    message: `dA = ones @ B^T within ${fmt(errA)}, dB = A^T @ ones within ${fmt(errB)}, value ${fmt(value)} (reference ${fmt(ref)})`,
  };
}

/** W5: the loss and every gradient element against float64. */
export function checkElementwise(x, value, grad) {
  let ref = 0;
  let maxErr = 0;
  for (let i = 0; i < x.length; ++i) {
    const xi = x[i];
    const t = Math.tanh(xi * xi + 1);
    const s = 1 / (1 + Math.exp(-xi));
    ref += t * s;
    const d = (1 - t * t) * 2 * xi * s + t * s * (1 - s); // d/dx tanh(x^2 + 1) sigmoid(x)
    maxErr = Math.max(maxErr, Math.abs(grad[i] - d) / (1e-3 + Math.abs(d)));
  }
  const ok = Math.abs(value - ref) <= 1e-4 * Math.abs(ref) && maxErr < 1e-3;
  return { ok, value, max_rel_err_grad: maxErr, message: `value ${fmt(value)} (reference ${fmt(ref)}), gradient within ${fmt(maxErr)} relative` };
}

export const gflops = (n, ms) => (6 * n ** 3) / (ms * 1e6);
