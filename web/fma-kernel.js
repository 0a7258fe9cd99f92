// The float32 GEMM micro-kernel with fused multiply-add (WebAssembly relaxed SIMD), for engines that have it.
//
// The main module is built for SIMD128 only, so it loads everywhere; its GEMM (core/kernels/cpu/simd_gemm.cpp)
// multiplies and adds separately, about 25 GFLOP/s. f32x4.relaxed_madd roughly doubles that where the CPU has
// FMA, but a module containing it does not even validate on engines without relaxed SIMD (Chrome < 114, Node 20
// without --experimental-wasm-relaxed-simd). So the one function that needs it, the 6 x 8 register tile, is a
// separate module of a few hundred bytes, written out below instruction by instruction (Emscripten 3.1.6's clang
// only knows the instruction's pre-standard encoding). It shares the main module's memory and is placed in its
// function table; the C++ side checks it against its own tile before using it.

// Unsigned LEB128.
function leb(n) {
  const out = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

const name = (s) => [...leb(s.length), ...Array.from(s, (c) => c.charCodeAt(0))];
const section = (id, bytes) => [id, ...leb(bytes.length), ...bytes];

// Opcodes.
const BLOCK = 0x02, LOOP = 0x03, END = 0x0b, BR_IF = 0x0d, VOID = 0x40;
const LOCAL_GET = 0x20, LOCAL_SET = 0x21, LOCAL_TEE = 0x22;
const I32_CONST = 0x41, I32_EQZ = 0x45, I32_ADD = 0x6a, I32_SUB = 0x6b;
const I32 = 0x7f, V128 = 0x7b;
const v128Load = (offset) => [0xfd, 0x00, 0x00, ...leb(offset)]; // memarg: alignment hint 1, offset
const v128Load32Splat = (offset) => [0xfd, 0x09, 0x00, ...leb(offset)];
const v128Store = (offset) => [0xfd, 0x0b, 0x00, ...leb(offset)];
const F32X4_RELAXED_MADD = [0xfd, ...leb(0x105)]; // a * b + c

const MR = 6; // rows of the tile: the A panel holds MR floats per depth step
const NR = 8; // columns: the B panel holds NR floats (two vectors) per depth step

/**
 * The module's bytes. It imports env.memory and exports
 * `tile(kc, pa, pb, out)`: out[6][8] = sum over p < kc of pa[p*6 + r] * pb[p*8 + j], all byte addresses (kc may
 * be 0: zeros). Panels are packed exactly as simd_gemm.cpp packs them.
 */
export function fmaKernelBytes() {
  // Parameters 0-3: kc, pa, pb, out. Locals 4-15: the accumulators, row r column half j at 4 + 2r + j;
  // 16, 17: the two B vectors; 18: the splatted A value.
  const KC = 0, PA = 1, PB = 2, OUT = 3, B0 = 16, B1 = 17, X = 18;
  const acc = (r, j) => 4 + 2 * r + j;
  const body = [BLOCK, VOID, LOCAL_GET, KC, I32_EQZ, BR_IF, 0, LOOP, VOID];
  body.push(LOCAL_GET, PB, ...v128Load(0), LOCAL_SET, B0, LOCAL_GET, PB, ...v128Load(16), LOCAL_SET, B1);
  for (let r = 0; r < MR; r++) {
    body.push(LOCAL_GET, PA, ...v128Load32Splat(4 * r), LOCAL_SET, X);
    for (const [j, b] of [[0, B0], [1, B1]]) {
      body.push(LOCAL_GET, X, LOCAL_GET, b, LOCAL_GET, acc(r, j), ...F32X4_RELAXED_MADD, LOCAL_SET, acc(r, j));
    }
  }
  body.push(LOCAL_GET, PA, I32_CONST, ...leb(4 * MR), I32_ADD, LOCAL_SET, PA);
  body.push(LOCAL_GET, PB, I32_CONST, ...leb(4 * NR), I32_ADD, LOCAL_SET, PB);
  body.push(LOCAL_GET, KC, I32_CONST, 1, I32_SUB, LOCAL_TEE, KC, BR_IF, 0, END, END);
  for (let r = 0; r < MR; r++) {
    for (let j = 0; j < 2; j++) body.push(LOCAL_GET, OUT, LOCAL_GET, acc(r, j), ...v128Store(16 * (2 * r + j)));
  }
  body.push(END);
  const locals = [1, 15, V128];
  const func = [...locals, ...body];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 4, I32, I32, I32, I32, 0]), // type 0: (i32 i32 i32 i32) -> ()
    ...section(2, [1, ...name('env'), ...name('memory'), 0x02, 0x00, 0x00]), // memory, at least 0 pages
    ...section(3, [1, 0]),
    ...section(7, [1, ...name('tile'), 0x00, 0]),
    ...section(10, [1, ...leb(func.length), ...func]),
  ]);
}

/**
 * Installs the fused kernel into a freshly created module when the engine validates relaxed SIMD and the C++
 * side's check of it passes. Returns the name of the float32 GEMM kernel in use: 'relaxed-simd' or 'simd128'.
 */
export function installFmaKernel(mod) {
  const bytes = fmaKernelBytes();
  if (!WebAssembly.validate(bytes)) return 'simd128';
  // The module's memory and function table, found by type (the build minifies export names).
  const exports = Object.values(mod.asm ?? {});
  const memory = exports.find((e) => e instanceof WebAssembly.Memory);
  const table = exports.find((e) => e instanceof WebAssembly.Table);
  if (!memory || !table) return 'simd128';
  let index;
  try {
    const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory } });
    index = table.grow(1);
    table.set(index, instance.exports.tile);
  } catch {
    return 'simd128'; // e.g. a table built without room to grow: the SIMD128 kernel is as correct, only slower
  }
  return mod._bp_set_f32_tile(index) ? 'relaxed-simd' : 'simd128';
}
