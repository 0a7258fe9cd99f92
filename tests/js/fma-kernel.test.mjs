// The relaxed-SIMD GEMM tile (web/fma-kernel.js): the module it builds computes the 6 x 8 tile, it is used when
// the engine validates relaxed SIMD and not otherwise, and matmul values and gradients are right with it and
// without it. Node 20 has relaxed SIMD behind --experimental-wasm-relaxed-simd: those checks run in a child Node
// with the flag (skipped, with the reason, on a Node that accepts neither the flag nor the instructions).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { init } from '../../web/index.js';
import { fmaKernelBytes } from '../../web/fma-kernel.js';

const entry = fileURLToPath(new URL('../../web/index.js', import.meta.url));
const kernelModule = fileURLToPath(new URL('../../web/fma-kernel.js', import.meta.url));
const FLAG = '--experimental-wasm-relaxed-simd';

/** Node arguments under which relaxed SIMD validates, or null. */
function relaxedArgs() {
  const probe = (args) =>
    spawnSync(process.execPath, [...args, '--input-type=module', '-e',
      `import { fmaKernelBytes } from ${JSON.stringify(kernelModule)}; process.exit(WebAssembly.validate(fmaKernelBytes()) ? 0 : 1);`],
    { stdio: 'ignore' }).status === 0;
  if (probe([])) return [];
  if (probe([FLAG])) return [FLAG];
  return null;
}
const args = relaxedArgs();
const skip = args === null ? 'this Node supports no WebAssembly relaxed SIMD' : false;

/** Runs `code` (an ES module body with `bp` and `kernelBytes` in scope) in a child Node with relaxed SIMD. */
function runRelaxed(code) {
  const src = `import { init } from ${JSON.stringify(entry)};
import { fmaKernelBytes as kernelBytes } from ${JSON.stringify(kernelModule)};
const bp = await init();
${code}`;
  const r = spawnSync(process.execPath, [...args, '--input-type=module', '-e', src], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

// matmul of seeded matrices and its gradients against float64 loops; shapes around the 6 x 8 tile and the
// 96 / 256 / 512 blocks. Prints the worst relative errors as JSON.
const MATMUL_CHECK = `
const worst = { value: 0, da: 0, db: 0 };
for (const [n, k, m] of [[1, 1, 1], [7, 9, 3], [13, 300, 17], [97, 257, 515], [6, 8, 256]]) {
  const a = bp.randn([n, k], { seed: n + k }), b = bp.randn([k, m], { seed: k + m });
  const [c, [da, db]] = bp.valueAndGrad((x, y) => x.matmul(y).sum(), { gradPosition: [0, 1] })(a, b);
  const A = a.dataSync(), B = b.dataSync();
  let total = 0, scale = 0;
  for (let i = 0; i < n; i++) for (let j = 0; j < m; j++) for (let p = 0; p < k; p++) {
    total += A[i * k + p] * B[p * m + j];
    scale += Math.abs(A[i * k + p] * B[p * m + j]);
  }
  worst.value = Math.max(worst.value, Math.abs(c.item() - total) / scale);
  // dA = ones @ B^T: every row is B's row sums; dB = A^T @ ones: every column is A's column sums. Errors are
  // relative to the sum of the magnitudes added (float32 sums of hundreds of terms).
  const rowSum = (p) => [B.slice(p * m, p * m + m).reduce((s, v) => s + v, 0), B.slice(p * m, p * m + m).reduce((s, v) => s + Math.abs(v), 0)];
  const colSum = (p) => { let s = 0, t = 0; for (let i = 0; i < n; i++) { s += A[i * k + p]; t += Math.abs(A[i * k + p]); } return [s, t]; };
  const rows = Array.from({ length: k }, (_, p) => rowSum(p)), cols = Array.from({ length: k }, (_, p) => colSum(p));
  const DA = da.dataSync(), DB = db.dataSync();
  for (let i = 0; i < n; i++) for (let p = 0; p < k; p++)
    worst.da = Math.max(worst.da, Math.abs(DA[i * k + p] - rows[p][0]) / rows[p][1]);
  for (let p = 0; p < k; p++) for (let j = 0; j < m; j++)
    worst.db = Math.max(worst.db, Math.abs(DB[p * m + j] - cols[p][0]) / cols[p][1]);
}
`;

test('the kernel module is a few hundred bytes and validates only with relaxed SIMD', () => {
  const bytes = fmaKernelBytes();
  assert.ok(bytes.length > 100 && bytes.length < 1024, `${bytes.length} bytes`);
  // Without relaxed SIMD (Node 20 by default) the package runs the SIMD128 kernel.
  const relaxedByDefault = WebAssembly.validate(bytes);
  return init().then((bp) => assert.equal(bp.gemmKernel, relaxedByDefault ? 'relaxed-simd' : 'simd128'));
});

test('SIMD128 kernel: matmul values and gradients', async () => {
  const bp = await init();
  const worst = new Function('bp', `${MATMUL_CHECK}; return worst;`)(bp);
  for (const [what, err] of Object.entries(worst)) assert.ok(err < 1e-5, `${what}: relative error ${err}`);
});

test('relaxed SIMD: the tile module computes the 6 x 8 tile', { skip }, () => {
  const r = runRelaxed(`
const memory = new WebAssembly.Memory({ initial: 1 });
const { exports } = new WebAssembly.Instance(new WebAssembly.Module(kernelBytes()), { env: { memory } });
const f = new Float32Array(memory.buffer);
const kc = 37, pa = 0, pb = 4 * 6 * kc, out = pb + 4 * 8 * kc;
for (let i = 0; i < 6 * kc; i++) f[i] = Math.sin(i);
for (let i = 0; i < 8 * kc; i++) f[pb / 4 + i] = Math.cos(i);
exports.tile(kc, pa, pb, out);
let err = 0;
for (let r = 0; r < 6; r++) for (let j = 0; j < 8; j++) {
  let s = 0;
  for (let p = 0; p < kc; p++) s += f[p * 6 + r] * f[pb / 4 + p * 8 + j];
  err = Math.max(err, Math.abs(s - f[out / 4 + r * 8 + j]));
}
f.fill(7, out / 4, out / 4 + 48);
exports.tile(0, pa, pb, out);
const zeros = Array.from(f.slice(out / 4, out / 4 + 48)).every((v) => v === 0);
console.log(JSON.stringify({ err, zeros, kernel: bp.gemmKernel }));
`);
  assert.ok(r.err < 1e-5, `tile error ${r.err}`);
  assert.ok(r.zeros, 'kc = 0 gives zeros');
  assert.equal(r.kernel, 'relaxed-simd');
});

test('relaxed SIMD: matmul values and gradients', { skip }, () => {
  const r = runRelaxed(`${MATMUL_CHECK}
console.log(JSON.stringify({ kernel: bp.gemmKernel, ...worst }));`);
  assert.equal(r.kernel, 'relaxed-simd');
  for (const what of ['value', 'da', 'db']) assert.ok(r[what] < 1e-5, `${what}: relative error ${r[what]}`);
});
