// Loading the WebAssembly module (web/dist/): its Emscripten glue (a CommonJS/classic script) and its binary,
// in Node and in browsers and workers.

const isNode = typeof process === 'object' && process !== null && typeof process.versions?.node === 'string';

/** Resolves to { factory, wasmBinary }: the glue's module factory and the module's bytes. */
export async function loadFactory() {
  const jsUrl = new URL('./dist/bprop.cjs', import.meta.url);
  const wasmUrl = new URL('./dist/bprop.wasm', import.meta.url);
  if (isNode) {
    // The generated glue is a CommonJS script; Node's fetch cannot read file: URLs, so the binary is read here.
    const nodeModule = 'node:module';
    const nodeFs = 'node:fs/promises';
    const { createRequire } = await import(/* @vite-ignore */ /* webpackIgnore: true */ nodeModule);
    const { readFile } = await import(/* @vite-ignore */ /* webpackIgnore: true */ nodeFs);
    const factory = createRequire(import.meta.url)('./dist/bprop.cjs');
    return { factory, wasmBinary: await readFile(wasmUrl) };
  }
  // Browsers and workers: the glue is a classic script defining `createBprop`; evaluate it without a <script>.
  const [jsText, wasm] = await Promise.all([
    fetch(jsUrl).then((r) => {
      if (!r.ok) throw new Error(`bprop: cannot load ${jsUrl} (${r.status})`);
      return r.text();
    }),
    fetch(wasmUrl).then((r) => {
      if (!r.ok) throw new Error(`bprop: cannot load ${wasmUrl} (${r.status})`);
      return r.arrayBuffer();
    }),
  ]);
  const factory = new Function(`${jsText}\nreturn createBprop;`)();
  return { factory, wasmBinary: new Uint8Array(wasm) };
}
