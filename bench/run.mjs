// npm run bench [-- --quick] [-- --workloads W1,W3] [-- --impls bprop-native,torch-cpu] [-- --no-build]
//               [-- --dtypes float32,bfloat16]
//
// Builds the native benchmark program and the WebAssembly module, then runs every implementation of the
// workloads W1..W7 one after another (bprop native, bprop WebAssembly in Node, PyTorch CPU, TensorFlow.js cpu
// and wasm), each on one thread, in float32 and in the half-precision rows (W3 in bfloat16, W1/W4 with mixed
// precision O2 in bfloat16; the peer torch-cpu-bf16 runs them with bfloat16 tensors and torch.autocast). Writes one JSON line per implementation and workload to
// bench/results/latest.jsonl, compares the step-0 losses, and prints a table of medians, the ratios
// bprop / peer and the issue's targets. A missing peer is reported and skipped, never fatal.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { packageSizes } from '../tools/package-size.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.dirname(here);
const IMPLS = ['bprop-native', 'bprop-native-jit', 'bprop-wasm', 'bprop-wasm-jit', 'torch-cpu', 'torch-cpu-bf16', 'tfjs-cpu', 'tfjs-wasm'];
const WORKLOADS = ['W1', 'W2', 'W3', 'W4', 'W5', 'W6', 'W7'];
const DTYPES = ['float32', 'bfloat16'];
/**
 * One row per workload (W3 twice), then the half-precision rows: their lines carry `dtype` (W3: the tensors in it)
 * and `amp` (W1/W4: the forward under mixed precision O2 in the dtype, float32 parameters).
 */
const ROWS = [
  { workload: 'W1', label: 'W1 mlp_step', unit: 'ms' },
  { workload: 'W2', label: 'W2 scalar_chain', unit: 'ns/op' },
  { workload: 'W3', n: 256, label: 'W3 matmul_grad n=256', unit: 'ms' },
  { workload: 'W3', n: 1024, label: 'W3 matmul_grad n=1024', unit: 'ms' },
  { workload: 'W4', label: 'W4 cnn_step', unit: 'ms' },
  { workload: 'W5', label: 'W5 elementwise', unit: 'ms' },
  { workload: 'W6', label: 'W6 gpt_step', unit: 'ms' },
  { workload: 'W7', n: 1024, label: 'W7 attention L=1024', unit: 'ms' },
  { workload: 'W7', n: 4096, label: 'W7 attention L=4096', unit: 'ms' },
  { workload: 'W1', amp: 'O2', dtype: 'bfloat16', label: 'W1 mlp_step O2 bf16', unit: 'ms' },
  { workload: 'W3', n: 256, dtype: 'bfloat16', label: 'W3 matmul_grad n=256 bf16', unit: 'ms' },
  { workload: 'W3', n: 1024, dtype: 'bfloat16', label: 'W3 matmul_grad n=1024 bf16', unit: 'ms' },
  { workload: 'W4', amp: 'O2', dtype: 'bfloat16', label: 'W4 cnn_step O2 bf16', unit: 'ms' },
  { workload: 'W6', amp: 'O2', dtype: 'bfloat16', label: 'W6 gpt_step O2 bf16', unit: 'ms' },
];
/** True when result line `l` measures row `r` (the same workload, size, dtype and amp level). */
const sameRow = (l, r) =>
  l.workload === r.workload && (l.n ?? null) === (r.n ?? null) && (l.dtype ?? null) === (r.dtype ?? null) && (l.amp ?? null) === (r.amp ?? null);
const rowFields = (r) => ({ ...(r.n ? { n: r.n } : {}), ...(r.amp ? { amp: r.amp } : {}), ...(r.dtype ? { dtype: r.dtype } : {}) });

// ---- options -------------------------------------------------------------------------------------------

const opts = { quick: false, build: true, workloads: WORKLOADS, impls: IMPLS, dtypes: DTYPES, relaxedSimd: true };
{
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--quick') opts.quick = true;
    else if (a === '--no-build') opts.build = false;
    else if (a === '--no-relaxed-simd') opts.relaxedSimd = false;
    else if (a === '--workloads') opts.workloads = argv[++i].split(',');
    else if (a === '--impls') opts.impls = argv[++i].split(',');
    else if (a === '--dtypes') opts.dtypes = argv[++i].split(',');
    else {
      console.error(`bench: unknown argument ${a}\nusage: npm run bench [-- --quick] [-- --workloads W1,W3] [-- --impls ${IMPLS.join(',')}] [-- --dtypes ${DTYPES.join(',')}] [-- --no-build] [-- --no-relaxed-simd]`);
      process.exit(2);
    }
  }
  for (const w of opts.workloads) if (!WORKLOADS.includes(w)) throw new Error(`bench: unknown workload ${w}`);
  for (const m of opts.impls) if (!IMPLS.includes(m)) throw new Error(`bench: unknown implementation ${m}`);
  for (const d of opts.dtypes) if (!DTYPES.includes(d)) throw new Error(`bench: unknown dtype ${d} (${DTYPES.join(', ')})`);
}
const passArgs = [...(opts.quick ? ['--quick'] : []), '--workloads', opts.workloads.join(',')];
const dtypeArgs = ['--dtypes', opts.dtypes.join(',')];

/**
 * Node options for the WebAssembly runs. bprop's float32 GEMM uses fused multiply-add from WebAssembly relaxed SIMD
 * where the engine has it (web/fma-kernel.js), as Chrome 114+ and Node 22 do by default; Node 20 has it behind
 * --experimental-wasm-relaxed-simd, so the flag is passed when this Node needs and accepts it (to the
 * TensorFlow.js wasm run too, whose kernels do not use it). --no-relaxed-simd measures the SIMD128-only path.
 */
function wasmNodeOptions() {
  if (!opts.relaxedSimd) return { args: [], note: 'SIMD128 only (--no-relaxed-simd)' };
  const kernel = pathToFileURL(path.join(root, 'web', 'fma-kernel.js')).href;
  const validates = (args) =>
    spawnSync(process.execPath, [...args, '--input-type=module', '-e',
      `import { fmaKernelBytes } from ${JSON.stringify(kernel)}; process.exit(WebAssembly.validate(fmaKernelBytes()) ? 0 : 1);`],
    { stdio: 'ignore' }).status === 0;
  if (validates([])) return { args: [], note: 'relaxed SIMD is on by default in this Node' };
  const flag = '--experimental-wasm-relaxed-simd';
  if (validates([flag])) return { args: [flag], note: `relaxed SIMD enabled with ${flag}` };
  return { args: [], note: 'this Node has no relaxed SIMD: SIMD128 only' };
}
const wasmNode = wasmNodeOptions();

// One thread everywhere: BLAS, OpenMP and the runtimes' own pools.
const env = { ...process.env, OPENBLAS_NUM_THREADS: '1', OMP_NUM_THREADS: '1', MKL_NUM_THREADS: '1' };

/**
 * OpenBLAS (PyTorch's BLAS here, and the raw-GEMM reference) picks its kernel from the CPU model; Debian's
 * 0.3.21 does not know recent Xeon models and falls back to its SSE3 "Prescott" kernel, several times slower
 * than the AVX2 / AVX-512 ones. Unless OPENBLAS_CORETYPE is already set, name the kernel family the CPU's
 * flags support, so the peer and the physical limit are measured as a tuned BLAS would run.
 */
function openblasCoretype() {
  if (process.env.OPENBLAS_CORETYPE !== undefined) return { value: process.env.OPENBLAS_CORETYPE, why: 'set by the caller' };
  if (process.arch !== 'x64' || !existsSync('/proc/cpuinfo')) return null;
  const flags = new Set((readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:(.*)$/m)?.[1] ?? '').trim().split(/\s+/));
  if (['avx512f', 'avx512bw', 'avx512vl', 'avx512dq'].every((f) => flags.has(f))) return { value: 'SkylakeX', why: 'CPU has AVX-512' };
  if (flags.has('avx2') && flags.has('fma')) return { value: 'Haswell', why: 'CPU has AVX2 + FMA' };
  return null;
}
const coretype = openblasCoretype();
if (coretype) env.OPENBLAS_CORETYPE = coretype.value;

// ---- running the implementations ------------------------------------------------------------------------

/** Calls onText for each complete line of a stream. */
function eachLine(stream, onText) {
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    buf += chunk;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      onText(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  });
  stream.on('end', () => {
    if (buf) onText(buf);
  });
}

/** Long diagnostic lines (a crashing runtime may print a whole minified script) are cut short. */
const clip = (text, max = 300) => (text.length > max ? `${text.slice(0, max)} ... (${text.length - max} more characters)` : text);

/**
 * Runs a command, collecting the JSON result lines of its stdout (onLine is called for each) and echoing
 * everything else, indented; resolves {code, lines, error}.
 */
function runChild(cmd, args, onLine) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const lines = [];
    eachLine(child.stdout, (raw) => {
      const text = raw.trim();
      if (!text) return;
      try {
        const obj = JSON.parse(text);
        if (obj && typeof obj === 'object' && obj.impl) {
          lines.push(obj);
          onLine(obj);
          return;
        }
      } catch {
        // not a result line
      }
      console.log(`    ${clip(text)}`);
    });
    eachLine(child.stderr, (raw) => {
      if (raw.trim()) console.log(`    ${clip(raw.trimEnd())}`);
    });
    child.on('error', (error) => resolve({ code: null, lines, error }));
    child.on('close', (code) => resolve({ code, lines, error: null }));
  });
}

/** Runs a build step; true when it succeeded. */
let builtSomething = false;
function build(label, cmd, args) {
  builtSomething = true;
  console.log(`bench: ${label}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, env, stdio: ['ignore', 'inherit', 'inherit'] });
  return r.status === 0;
}

const fmtNum = (v) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v >= 1 ? v.toFixed(2) : v.toPrecision(2));

function describe(line) {
  const what = `${line.workload}${line.n ? ` n=${line.n}` : ''}${line.amp ? ` ${line.amp}` : ''}${line.dtype ? ` ${line.dtype}` : ''}`;
  if (line.unsupported) return `${what}: unsupported (${line.unsupported})`;
  if (line.error) return `${what}: error: ${line.error}`;
  if (line.skipped) return `${what}: skipped (${line.skipped})`;
  const extra = (line.gflops ? `, ${fmtNum(line.gflops)} GFLOP/s` : '') + (line.peak_bytes ? `, peak ${fmtNum(line.peak_bytes / 1e6)} MB` : '');
  const check = line.check ? (line.check.ok ? 'check ok' : `CHECK FAILED: ${line.check.message}`) : 'no check';
  return `${what}: median ${fmtNum(line.median)} ${line.metric} (min ${fmtNum(line.min)}, max ${fmtNum(line.max)}, ${line.reps} reps${extra}); ${check}`;
}

/**
 * How each implementation is prepared and started; prepare() returns null or the reason to skip; rows(r) says
 * which rows it reports (bprop everything; the float32 peers the float32 rows; torch-cpu-bf16 the half rows).
 */
const f32Rows = (r) => !r.dtype;
const halfRows = (r) => Boolean(r.dtype);
const require = createRequire(import.meta.url);
const nativeExe = path.join(root, 'build', 'bench', 'bench', 'bench_native');
const python = process.env.BPROP_BENCH_PYTHON || '/usr/bin/python3';
const hasModule = (name) => {
  try {
    require.resolve(name);
    return true;
  } catch {
    return false;
  }
};
const RUNNERS = {
  'bprop-native': {
    prepare() {
      if (opts.build) {
        const dir = path.join(root, 'build', 'bench');
        const ok =
          build('configuring bench_native', 'cmake', ['-S', root, '-B', dir, '-DBPROP_BENCH=ON', '-DBPROP_BUILD_TESTS=OFF', '-DCMAKE_BUILD_TYPE=Release']) &&
          build('building bench_native', 'cmake', ['--build', dir, '--target', 'bench_native', '-j', String(os.availableParallelism?.() ?? os.cpus().length)]);
        if (!ok) return 'the native build failed';
      }
      return existsSync(nativeExe) ? null : `${path.relative(root, nativeExe)} is missing (build it, or run without --no-build)`;
    },
    rows: () => true,
    cmd: () => [nativeExe, [...passArgs, ...dtypeArgs]],
  },
  // The same program with each differentiated function wrapped in jit (graph mode: traced once, optimised,
  // replayed); the training steps' SGD update still runs on the host after the graph.
  'bprop-native-jit': {
    prepare() {
      if (opts.impls.includes('bprop-native')) return existsSync(nativeExe) ? null : 'bench_native is missing';
      return RUNNERS['bprop-native'].prepare();
    },
    rows: () => true,
    cmd: () => [nativeExe, ['--jit', ...passArgs, ...dtypeArgs]],
  },
  'bprop-wasm': {
    prepare() {
      const wasm = path.join(root, 'web', 'dist', 'bprop.wasm');
      if (opts.build && !build('building the WebAssembly module', 'bash', [path.join(root, 'scripts', 'build-wasm.sh')])) {
        if (!existsSync(wasm)) return 'the WebAssembly build failed and web/dist/ has no module';
        console.log('bench: the WebAssembly build failed; measuring the module already in web/dist/');
      }
      return existsSync(wasm) ? null : 'web/dist/bprop.wasm is missing (npm run build:wasm)';
    },
    rows: (r) => f32Rows(r) || Boolean(r.amp),  // WebAssembly: W1/W4 with mixed precision, no W3 in bfloat16
    cmd: () => [process.execPath, [...wasmNode.args, path.join(here, 'wasm.mjs'), ...passArgs, ...dtypeArgs]],
  },
  // The same workloads with each differentiated function wrapped in bp.jit (graph mode: traced once, replayed).
  'bprop-wasm-jit': {
    prepare() {
      // (the module bprop-wasm built, when both run)
      if (opts.impls.includes('bprop-wasm')) return existsSync(path.join(root, 'web', 'dist', 'bprop.wasm')) ? null : 'web/dist/bprop.wasm is missing';
      return RUNNERS['bprop-wasm'].prepare();
    },
    rows: (r) => f32Rows(r) || Boolean(r.amp),
    cmd: () => [process.execPath, [...wasmNode.args, path.join(here, 'wasm.mjs'), '--jit', ...passArgs, ...dtypeArgs]],
  },
  'torch-cpu': {
    prepare() {
      const r = spawnSync(python, ['-c', 'import torch, numpy'], { env, stdio: 'ignore' });
      if (r.error) return `${python} not found`;
      return r.status === 0 ? null : `PyTorch or numpy is not importable by ${python} (Debian: apt-get install python3-torch)`;
    },
    rows: f32Rows,
    cmd: () => [python, [path.join(here, 'torch_bench.py'), ...passArgs]],
  },
  // torch.bfloat16 tensors (W3) and torch.autocast('cpu', torch.bfloat16) around the forward (W1, W4).
  'torch-cpu-bf16': {
    prepare: () => RUNNERS['torch-cpu'].prepare(),
    rows: halfRows,
    cmd: () => [python, [path.join(here, 'torch_bench.py'), '--bf16', ...passArgs]],
  },
  'tfjs-cpu': {
    prepare: () => (hasModule('@tensorflow/tfjs') ? null : '@tensorflow/tfjs is not installed (npm install)'),
    rows: f32Rows,
    cmd: () => [process.execPath, [path.join(here, 'tfjs.mjs'), '--backend', 'cpu', ...passArgs]],
  },
  'tfjs-wasm': {
    prepare: () =>
      hasModule('@tensorflow/tfjs') && hasModule('@tensorflow/tfjs-backend-wasm')
        ? null
        : '@tensorflow/tfjs-backend-wasm is not installed (npm install)',
    rows: f32Rows,
    cmd: () => [process.execPath, [...wasmNode.args, path.join(here, 'tfjs.mjs'), '--backend', 'wasm', ...passArgs]],
  },
};

/** The rows this run asks for, and those of one implementation. */
const wanted = ROWS.filter((r) => opts.workloads.includes(r.workload) && opts.dtypes.includes(r.dtype ?? 'float32'));
const wantedOf = (impl) => wanted.filter((r) => RUNNERS[impl].rows(r));

const SETTLE_MS = 10_000;
const results = [];
const started = Date.now();
console.log(`bench: ${opts.quick ? 'QUICK run (few repetitions: a smoke test, not a measurement)' : 'full run'}; ` +
  `${opts.impls.join(', ')}; ${opts.workloads.join(', ')}; ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), one thread each`);
if (coretype) console.log(`bench: OPENBLAS_CORETYPE=${coretype.value} (${coretype.why})`);
console.log(`bench: WebAssembly runs: ${wasmNode.note}`);
// Everything is built before anything is measured (no compile competes with a measurement), and the machine is
// given a moment after the builds to finish writing them out.
const skips = new Map();
for (const impl of opts.impls) skips.set(impl, wantedOf(impl).length ? RUNNERS[impl].prepare() : 'none of the rows asked for');
if (builtSomething) {
  console.log(`bench: waiting ${SETTLE_MS / 1000} s for the machine to settle after the builds`);
  spawnSync('sync');
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
}
for (const impl of opts.impls) {
  const runner = RUNNERS[impl];
  console.log(`\n== ${impl} ==`);
  const t0 = Date.now();
  const skip = skips.get(impl);
  if (skip) {
    console.log(`bench: ${impl} skipped: ${skip}`);
    for (const r of wantedOf(impl)) results.push({ impl, workload: r.workload, ...rowFields(r), skipped: skip });
    continue;
  }
  const [cmd, args] = runner.cmd();
  const { code, lines, error } = await runChild(cmd, args, (line) => console.log(`  ${describe(line)}`));
  results.push(...lines);
  // Workloads the program did not report (it crashed, or was killed) are errors.
  for (const r of wantedOf(impl)) {
    if (!lines.some((l) => sameRow(l, r))) {
      const why = error ? String(error.message) : `${path.basename(cmd)} exited with status ${code} before reporting it`;
      results.push({ impl, workload: r.workload, ...rowFields(r), error: why });
      console.log(`  ${describe(results[results.length - 1])}`);
    }
  }
  console.log(`bench: ${impl} done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

mkdirSync(path.join(here, 'results'), { recursive: true });
const outFile = path.join(here, 'results', 'latest.jsonl');
writeFileSync(outFile, results.map((l) => JSON.stringify(l)).join('\n') + '\n');

// ---- step-0 losses: the same inputs must give the same loss everywhere ---------------------------------------

/** The line of `impl` for a workload (and n) in float32, or with `precision` ({dtype, amp}) in a half row. */
const find = (impl, workload, n, precision = {}) =>
  results.find((l) => l.impl === impl && sameRow(l, { workload, n, ...precision }));
const O2 = { amp: 'O2', dtype: 'bfloat16' };
const BF16 = { dtype: 'bfloat16' };
const valid = (l) => l && l.median !== undefined && l.check?.ok !== false;
const mismatches = [];
console.log('\n== step-0 losses (same seeded inputs, so the same loss up to float32 rounding; O2 bf16 up to 2%) ==');
// Mixed precision rounds differently in each implementation (O2 against autocast's list), hence the wider bound.
for (const [workload, precision, rel] of [['W1', {}, 1e-4], ['W4', {}, 1e-4], ['W1', O2, 2e-2], ['W4', O2, 2e-2]]) {
  if (!opts.workloads.includes(workload)) continue;
  const label = `${workload}${precision.amp ? ' O2 bf16' : ''}`;
  const losses = opts.impls.map((impl) => [impl, find(impl, workload, undefined, precision)?.check?.loss0]).filter(([, v]) => Number.isFinite(v));
  if (!losses.length) continue;
  const ref = losses[0][1];
  const bad = losses.filter(([, v]) => Math.abs(v - ref) > rel * Math.abs(ref));
  console.log(`${label}: ${losses.map(([i, v]) => `${i} ${v.toPrecision(8)}`).join(', ')}${bad.length ? '  <-- MISMATCH' : '  (agree)'}`);
  if (bad.length) mismatches.push(`${label}: ${bad.map(([i]) => i).join(', ')} differ from ${losses[0][0]}`);
}

// ---- the table ----------------------------------------------------------------------------------------------

function cell(l) {
  if (!l) return '';
  if (l.unsupported) return 'unsupported';
  if (l.error) return 'error';
  if (l.skipped) return 'skipped';
  return `${fmtNum(l.median)}${l.check?.ok === false ? ' WRONG' : ''}`;
}
function ratio(a, b) {
  return valid(a) && valid(b) ? a.median / b.median : null;
}
const RATIOS = [
  ['native/torch', 'bprop-native', 'torch-cpu'],
  ['native/torch-bf16', 'bprop-native', 'torch-cpu-bf16'],
  ['native-jit/torch-bf16', 'bprop-native-jit', 'torch-cpu-bf16'],
  ['native-jit/native', 'bprop-native-jit', 'bprop-native'],
  ['native-jit/torch', 'bprop-native-jit', 'torch-cpu'],
  ['native/tfjs-cpu', 'bprop-native', 'tfjs-cpu'],
  ['wasm/tfjs-wasm', 'bprop-wasm', 'tfjs-wasm'],
  ['wasm/tfjs-cpu', 'bprop-wasm', 'tfjs-cpu'],
  ['wasm/native', 'bprop-wasm', 'bprop-native'],
  ['wasm-jit/wasm', 'bprop-wasm-jit', 'bprop-wasm'],
].filter(([, a, b]) => opts.impls.includes(a) && opts.impls.includes(b));
const header = ['workload', 'unit', ...opts.impls, ...RATIOS.map(([n]) => n)];
const table = wanted.map((r) => [
  r.label,
  r.unit,
  ...opts.impls.map((impl) => cell(find(impl, r.workload, r.n, r))),
  ...RATIOS.map(([, a, b]) => {
    const v = ratio(find(a, r.workload, r.n, r), find(b, r.workload, r.n, r));
    return v === null ? '' : v.toFixed(v < 0.1 ? 3 : 2);
  }),
]);
const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i].length)));
const fmtRow = (row) => `| ${row.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
const tableText = [fmtRow(header), `|${widths.map((w, i) => (i < 2 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`, ...table.map(fmtRow)].join('\n');
console.log(`\n== medians (lower is better) and ratios bprop / peer (< 1: bprop faster) ==\n${tableText}`);

// W3 throughput next to the raw GEMM of the same size (the physical limit of this machine, one thread).
const gemmLines = [];
for (const n of [256, 1024]) {
  if (!opts.workloads.includes('W3')) break;
  const parts = opts.impls.map((impl) => [impl, find(impl, 'W3', n)]).filter(([, l]) => valid(l));
  const ref = find('bprop-native', 'W3', n)?.ref ?? {};
  const refText = [
    ref.openblas_gflops ? `OpenBLAS sgemm ${fmtNum(ref.openblas_gflops)}${ref.openblas_core ? ` (${ref.openblas_core} kernel)` : ''}` : null,
    ref.eigen_gflops ? `Eigen ${fmtNum(ref.eigen_gflops)}` : null,
  ].filter(Boolean).join(', ');
  gemmLines.push(`W3 n=${n} GFLOP/s (6 n^3 flops): ${parts.map(([i, l]) => `${i} ${fmtNum(l.gflops)}`).join(', ')}` +
    (refText ? `; raw single GEMM (2 n^3): ${refText}` : ''));
}
for (const n of [256, 1024]) {
  if (!opts.workloads.includes('W3') || !opts.dtypes.includes('bfloat16')) break;
  const parts = opts.impls.map((impl) => [impl, find(impl, 'W3', n, BF16)]).filter(([, l]) => valid(l));
  if (parts.length) gemmLines.push(`W3 n=${n} bfloat16 GFLOP/s: ${parts.map(([i, l]) => `${i} ${fmtNum(l.gflops)}${l.half_gemms ? ` (${l.gemm}; products on it ${l.half_gemms.onednn}, widened ${l.half_gemms.widened})` : ''}`).join(', ')}`);
}
if (gemmLines.length) console.log(`\n${gemmLines.join('\n')}`);

// W7: the attention op's time and peak bytes against the same attention composed in ops (bprop's, and torch's time).
for (const n of [1024, 4096]) {
  if (!opts.workloads.includes('W7')) break;
  const l = find('bprop-native', 'W7', n);
  if (!valid(l) || !l.composed) continue;
  const torch = find('torch-cpu', 'W7', n);
  console.log(`W7 L=${n}: scaled_dot_product_attention ${fmtNum(l.median)} ms, peak ${fmtNum(l.peak_bytes / 1e6)} MB; ` +
    `composed in ops ${fmtNum(l.composed.ms)} ms, peak ${fmtNum(l.composed.peak_bytes / 1e6)} MB ` +
    `(${(l.composed.peak_bytes / l.peak_bytes).toFixed(1)}x the op's)` +
    (valid(torch) ? `; torch composed ${fmtNum(torch.median)} ms (op/torch ${(l.median / torch.median).toFixed(2)})` : ''));
}

// Half precision against float32 in the same implementation: time, and the peak bytes live during one step.
if (opts.dtypes.includes('bfloat16')) {
  const halfLines = [];
  for (const [workload, n, precision, label] of [['W1', undefined, O2, 'W1 O2 bf16'], ['W4', undefined, O2, 'W4 O2 bf16'],
    ['W6', undefined, O2, 'W6 O2 bf16'],
    ['W3', 256, BF16, 'W3 n=256 bf16'], ['W3', 1024, BF16, 'W3 n=1024 bf16']]) {
    if (!opts.workloads.includes(workload)) continue;
    const parts = [];
    for (const impl of opts.impls) {
      const f32 = find(impl, workload, n);
      const half = find(impl, workload, n, precision);
      if (!valid(f32) || !valid(half)) continue;
      const peak = f32.peak_bytes && half.peak_bytes
        ? `, peak ${fmtNum(f32.peak_bytes / 1e6)} -> ${fmtNum(half.peak_bytes / 1e6)} MB (step ${fmtNum(f32.step_bytes / 1e6)} -> ${fmtNum(half.step_bytes / 1e6)})`
        : '';
      parts.push(`${impl} ${(half.median / f32.median).toFixed(2)}x${peak}`);
    }
    const peer = ratio(find('torch-cpu-bf16', workload, n, precision), find('torch-cpu', workload, n));
    if (peer !== null) parts.push(`torch ${peer.toFixed(2)}x`);
    if (parts.length) halfLines.push(`${label} / float32: ${parts.join('; ')}`);
  }
  if (halfLines.length) console.log(`\n== half precision / float32 in the same implementation (time; peak bytes of one step) ==\n${halfLines.join('\n')}`);
}

// ---- the issue's targets ---------------------------------------------------------------------------------

const targets = [];
const target = (label, value, limit, detail = '') => {
  const status = value === null || value === undefined ? 'n/a' : value <= limit ? 'PASS' : 'MISS';
  const shown = value === null || value === undefined ? '-' : value.toFixed(value < 0.1 ? 3 : 2);
  targets.push({ label, status, value: shown, limit, detail });
};
const rat = (a, b, w, n) => ratio(find(a, w, n), find(b, w, n));
target('native/torch W1', rat('bprop-native', 'torch-cpu', 'W1'), 1.0);
target('native/torch W2', rat('bprop-native', 'torch-cpu', 'W2'), 0.01);
{
  const l = find('bprop-native', 'W2');
  target('native W2 ns per recorded op', valid(l) ? l.median : null, 200);
}
target('native/torch W3 n=1024', rat('bprop-native', 'torch-cpu', 'W3', 1024), 1.1);
target('native/torch-composed W7 L=4096', rat('bprop-native', 'torch-cpu', 'W7', 4096), 1.0);
target('native/torch W4', rat('bprop-native', 'torch-cpu', 'W4'), 0.8);
target('native/torch W5', rat('bprop-native', 'torch-cpu', 'W5'), 1.0);
// graph mode (issue 13)
{
  const l = find('bprop-native-jit', 'W2');
  target('native jit W2 ns per op', valid(l) ? l.median : null, 15);
}
target('native-jit/torch W5', rat('bprop-native-jit', 'torch-cpu', 'W5'), 0.5);
target('native-jit/torch W1', rat('bprop-native-jit', 'torch-cpu', 'W1'), 0.8);
target('native-jit/torch W4', rat('bprop-native-jit', 'torch-cpu', 'W4'), 0.8);
// transformers (issue 31)
target('native/torch W6', rat('bprop-native', 'torch-cpu', 'W6'), 1.0);
target('native-jit/torch W6', rat('bprop-native-jit', 'torch-cpu', 'W6'), 0.8);
target('wasm/tfjs-wasm W6', rat('bprop-wasm', 'tfjs-wasm', 'W6'), 0.1);
target('wasm-jit/wasm W6', rat('bprop-wasm-jit', 'bprop-wasm', 'W6'), 0.8);
for (const w of ['W1', 'W2']) {
  const l = find('bprop-native-jit', w);
  const ms = valid(l) ? l.jit?.compile_ms : null;
  target(`native jit ${w} trace + optimise ms`, ms ?? null, w === 'W1' ? 50 : 1000);
}
target('wasm/tfjs-wasm W1', rat('bprop-wasm', 'tfjs-wasm', 'W1'), 0.3);
target('wasm/tfjs-wasm W2', rat('bprop-wasm', 'tfjs-wasm', 'W2'), 0.05);
target('wasm/tfjs-wasm W3 n=256', rat('bprop-wasm', 'tfjs-wasm', 'W3', 256), 0.2);
target('wasm/tfjs-wasm W3 n=1024', rat('bprop-wasm', 'tfjs-wasm', 'W3', 1024), 0.2);
target('wasm/tfjs-wasm W5', rat('bprop-wasm', 'tfjs-wasm', 'W5'), 0.5);
{
  const l = find('bprop-wasm', 'W4');
  const t = find('tfjs-wasm', 'W4');
  targets.push({
    label: 'wasm W4 runs',
    status: !l ? 'n/a' : valid(l) ? 'PASS' : 'MISS',
    value: valid(l) ? 'runs' : '-',
    limit: 'runs',
    detail: t?.unsupported ? 'tfjs-wasm: unsupported' : '',
  });
}
// graph mode in WebAssembly (issue 13) and eager overhead there (issue 16)
{
  const jit = find('bprop-wasm-jit', 'W2');
  target('wasm jit W2 ns per op', valid(jit) ? jit.median : null, 40);
  const eager = find('bprop-wasm', 'W2');
  target('wasm W2 ns per recorded op', valid(eager) ? eager.median : null, 1000);
}
for (const w of ['W1', 'W2']) {
  const l = find('bprop-wasm-jit', w);
  const s = valid(l) ? l.jit?.compile_s : null;
  target(`wasm jit ${w} trace + optimise ms`, typeof s === 'number' ? s * 1000 : null, w === 'W1' ? 50 : 1000);
}
target('wasm-jit/tfjs-wasm W5', rat('bprop-wasm-jit', 'tfjs-wasm', 'W5'), 0.15);
target('wasm-jit/wasm W1', rat('bprop-wasm-jit', 'bprop-wasm', 'W1'), 0.6);
target('wasm-jit/wasm W4', rat('bprop-wasm-jit', 'bprop-wasm', 'W4'), 0.6);
target('wasm/native W1', rat('bprop-wasm', 'bprop-native', 'W1'), 4);
target('wasm/native W3 n=256', rat('bprop-wasm', 'bprop-native', 'W3', 256), 4);
target('wasm/native W3 n=1024', rat('bprop-wasm', 'bprop-native', 'W3', 1024), 4);
{
  const sizes = packageSizes(root);
  for (const [key, label, limit] of [['moduleAndEntry', 'package gzip: wasm + glue + entry KB', 200],
    ['withImports', 'package gzip: with the modules the entry imports KB', 260]]) {
    const gz = sizes ? sizes[key] : null;
    targets.push({
      label,
      status: gz === null ? 'n/a' : gz < limit * 1000 ? 'PASS' : 'MISS',
      value: gz === null ? '-' : (gz / 1000).toFixed(1),
      limit: `< ${limit}`,
      detail: '',
    });
  }
}
// half precision (issue 30): GFLOP/s >= 0.9x torch's bfloat16, i.e. time <= 1 / 0.9
const ratHalf = (a, b, w, n, precision) => ratio(find(a, w, n, precision), find(b, w, n, precision));
target('native/torch-bf16 W3 n=256 bf16', ratHalf('bprop-native', 'torch-cpu-bf16', 'W3', 256, BF16), 1.11);
target('native/torch-bf16 W3 n=1024 bf16', ratHalf('bprop-native', 'torch-cpu-bf16', 'W3', 1024, BF16), 1.11);
target('native/torch-bf16 W1 O2', ratHalf('bprop-native', 'torch-cpu-bf16', 'W1', undefined, O2), 1.0);
target('native/torch-bf16 W4 O2', ratHalf('bprop-native', 'torch-cpu-bf16', 'W4', undefined, O2), 1.0);
target('native-jit/torch-bf16 W1 O2', ratHalf('bprop-native-jit', 'torch-cpu-bf16', 'W1', undefined, O2), 0.85);
target('native-jit/torch-bf16 W4 O2', ratHalf('bprop-native-jit', 'torch-cpu-bf16', 'W4', undefined, O2), 0.85);
target('native/torch-bf16 W6 O2', ratHalf('bprop-native', 'torch-cpu-bf16', 'W6', undefined, O2), 1.0);
for (const w of ['W1', 'W4']) {
  target(`wasm ${w} O2 bf16 / float32`, ratio(find('bprop-wasm', w, undefined, O2), find('bprop-wasm', w)), 1.2);
}
console.log('\n== targets (issues 7, 13, 16, 30 and 31) ==');
const lw = Math.max(...targets.map((t) => t.label.length));
for (const t of targets) {
  console.log(`${t.status.padEnd(4)}  ${t.label.padEnd(lw)}  ${String(t.value).padStart(8)}  (target ${typeof t.limit === 'number' ? `<= ${t.limit}` : t.limit})${t.detail ? `  ${t.detail}` : ''}`);
}

// ---- summary ----------------------------------------------------------------------------------------------

const problems = results.filter((l) => l.error || l.check?.ok === false);
const skipped = [...new Set(results.filter((l) => l.skipped).map((l) => `${l.impl} (${l.skipped})`))];
const unsupported = results.filter((l) => l.unsupported).map((l) => `${l.impl} ${l.workload}`);
console.log(`\nbench: wrote ${path.relative(root, outFile)} (${results.length} lines) in ${((Date.now() - started) / 1000).toFixed(0)} s`);
if (skipped.length) console.log(`bench: skipped: ${skipped.join('; ')}`);
if (unsupported.length) console.log(`bench: unsupported by the peer: ${unsupported.join(', ')}`);
if (mismatches.length) console.log(`bench: STEP-0 LOSS MISMATCH: ${mismatches.join('; ')}`);
for (const l of problems) console.log(`bench: ${l.impl} ${describe(l)}`);
// Failing self-checks, mismatched inputs or a crashing bprop program fail the run; peers never do.
const ownProblems = problems.filter((l) => l.impl.startsWith('bprop-'));
process.exitCode = ownProblems.length || mismatches.length ? 1 : 0;
