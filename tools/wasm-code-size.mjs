// Where the WebAssembly module's bytes go: its functions' code grouped by the part of bprop they belong to, each
// group's size raw and gzipped on its own (gzip -9 of its function bodies laid end to end), and the data.
//
//   node tools/wasm-code-size.mjs build/wasm-size/bprop.wasm [--top 20] [--group kernels]
//
// The module needs its function names: link it with --profiling-funcs, e.g.
//   emcmake cmake -S . -B build/wasm-size -DBPROP_WASM_OUTPUT_DIR=$PWD/build/wasm-size \
//     "-DBPROP_WASM_LINK_OPT=-O3;--profiling-funcs" && cmake --build build/wasm-size --target bprop_wasm
// (the names only add a custom section: the code is the package's). Groups are found from the demangled names,
// first match wins; `optional` marks the parts that a module without them would still leave the op catalogue
// and autodiff working (the last lines sum the rest: the floor of a module holding every op).
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

export const GROUPS = [
  { name: 'JSON: vector files, checkpoints, graph export', optional: true,
    test: /nlohmann|vectors::|to_json|from_json|ir_json|checkpoint|safetensors|export_grad_graph|Exporter|strtod/i },
  { name: 'graph mode: tracing, passes, replay', optional: true, test: /graph::|JitFn|jit|Tracer/ },
  { name: 'nn: layers, optimizers, their bindings', optional: true, test: /js_nn|bprop::nn::|optim::|Optimizer/ },
  { name: 'embind and the JavaScript API', optional: false, test: /emscripten::|embind|bprop::js::/ },
  { name: 'op registration, shape/dtype rules, bprops', optional: false, test: /register_\w+_ops|InferCtx|BpropCtx/ },
  { name: 'kernels', optional: false, test: /_kernel|cpu::|vm::|simd_gemm|KernelCtx/ },
  { name: 'autodiff', optional: false, test: /autodiff|GradFn|Pullback|gradcheck/ },
  { name: 'C/C++ runtime', optional: false, test: /^std::|^__|^_Unwind|^(malloc|free|realloc|calloc|memcpy|memmove|memset|snprintf|vsnprintf|fmt_\w+|printf_core)$|^[a-z_0-9]+$/ },
  { name: 'the rest of the core (tensor, dispatch, ops API)', optional: false, test: /./ },
];

/** { functions: [{name, body}], data } of a WebAssembly binary with a name section. */
export function readModule(bytes) {
  let p = 8;
  const leb = () => {
    let r = 0, s = 0, b;
    do { b = bytes[p++]; r += (b & 0x7f) * 2 ** s; s += 7; } while (b & 0x80);
    return r;
  };
  const skipLimits = () => { const flags = bytes[p++]; leb(); if (flags & 1) leb(); };
  let imported = 0;
  const bodies = [];
  const names = new Map();
  const data = [];
  while (p < bytes.length) {
    const id = bytes[p++];
    const size = leb();
    const end = p + size;
    if (id === 0) {
      const length = leb();
      const section = bytes.subarray(p, p + length).toString();
      p += length;
      while (section === 'name' && p < end) {
        const sub = bytes[p++];
        const subEnd = leb() + p;
        if (sub === 1) {
          for (let n = leb(); n > 0; --n) {
            const index = leb();
            const l = leb();
            names.set(index, bytes.subarray(p, p + l).toString());
            p += l;
          }
        }
        p = subEnd;
      }
    } else if (id === 2) {  // imports: count the functions, which come first in the index space
      for (let n = leb(); n > 0; --n) {
        for (let k = 0; k < 2; ++k) {  // module and field names
          const length = leb();
          p += length;
        }
        const kind = bytes[p++];
        if (kind === 0) { leb(); ++imported; } else if (kind === 1) { p++; skipLimits(); } else if (kind === 2) {
          skipLimits();
        } else if (kind === 3) { p += 2; } else { p++; leb(); }
      }
    } else if (id === 10) {
      for (let n = leb(), i = 0; i < n; ++i) {
        const length = leb();
        bodies.push({ index: imported + i, body: bytes.subarray(p, p + length) });
        p += length;
      }
    } else if (id === 11) {
      data.push(bytes.subarray(p, end));
    }
    p = end;
  }
  if (names.size === 0) throw new Error('the module has no function names: link it with --profiling-funcs');
  return { functions: bodies.map(({ index, body }) => ({ name: names.get(index) ?? `#${index}`, body })), data };
}

const gz = (parts) => gzipSync(Buffer.concat(parts), { level: 9 }).length;

export function groupSizes(bytes) {
  const { functions, data } = readModule(bytes);
  const groups = GROUPS.map((g) => ({ ...g, functions: [] }));
  for (const f of functions) groups.find((g) => g.test.test(f.name)).functions.push(f);
  const sized = groups.map((g) => ({
    name: g.name, optional: g.optional, functions: g.functions,
    raw: g.functions.reduce((s, f) => s + f.body.length, 0), gzip: gz(g.functions.map((f) => f.body)),
  }));
  const required = groups.filter((g) => !g.optional).flatMap((g) => g.functions.map((f) => f.body));
  return {
    groups: sized,
    code: { raw: functions.reduce((s, f) => s + f.body.length, 0), gzip: gz(functions.map((f) => f.body)) },
    required: { raw: required.reduce((s, b) => s + b.length, 0), gzip: gz(required) },
    data: { raw: data.reduce((s, b) => s + b.length, 0), gzip: gz(data) },
  };
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  const args = process.argv.slice(2);
  const file = args.find((a, i) => !a.startsWith('--') && !(i > 0 && args[i - 1].startsWith('--')));
  if (!file) {
    console.error('usage: node tools/wasm-code-size.mjs MODULE.wasm [--top N] [--group NAME]');
    process.exit(2);
  }
  const option = (name, fallback) => { const i = args.indexOf(name); return i < 0 ? fallback : args[i + 1]; };
  let s;
  try {
    s = groupSizes(readFileSync(file));
  } catch (e) {
    console.error(`wasm-code-size: ${file}: ${e.message}`);
    process.exit(1);
  }
  const kb = (n) => (n / 1000).toFixed(1).padStart(7);
  console.log(`${'group'.padEnd(52)}     raw KB  gzip KB`);
  for (const g of s.groups) console.log(`${(g.name + (g.optional ? ' (optional)' : '')).padEnd(52)} ${kb(g.raw)}  ${kb(g.gzip)}`);
  console.log(`${'all code'.padEnd(52)} ${kb(s.code.raw)}  ${kb(s.code.gzip)}`);
  console.log(`${'code without the optional groups'.padEnd(52)} ${kb(s.required.raw)}  ${kb(s.required.gzip)}`);
  console.log(`${'data'.padEnd(52)} ${kb(s.data.raw)}  ${kb(s.data.gzip)}`);
  const group = option('--group', null);
  const top = Number(option('--top', group ? 30 : 0));
  const pool = group ? s.groups.filter((g) => g.name.toLowerCase().includes(group.toLowerCase())) : s.groups;
  const largest = pool.flatMap((g) => g.functions).sort((a, b) => b.body.length - a.body.length).slice(0, top);
  for (const f of largest) console.log(`${String(f.body.length).padStart(7)}  ${f.name.slice(0, 150)}`);
}
