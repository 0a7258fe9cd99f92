// Loading the WebAssembly module: its Emscripten glue (an ES module, imported statically so that bundlers follow
// it) and its binary, in Node, browsers and workers, without eval or new Function (a strict Content-Security-Policy
// allows this with 'wasm-unsafe-eval').
//
// The binary's URL is written as `new URL('./dist/bprop.wasm', import.meta.url)`: Vite, webpack 5, esbuild and
// Rollup recognise that form and emit the file as an asset. Apps that host the binary elsewhere pass
// init({ wasmUrl }) or init({ wasmBinary }).

import createBprop from './dist/bprop.mjs';
import { BpropError, ValueError } from './errors.js';

const isNode = typeof process === 'object' && process !== null && typeof process.versions?.node === 'string';

/** The URL of the binary that ships next to this file. */
export function defaultWasmUrl() {
  return new URL('./dist/bprop.wasm', import.meta.url);
}

/** init()'s options, checked: { wasmUrl?: string | URL, wasmBinary?: ArrayBuffer | ArrayBufferView }. */
export function loadOptions(options) {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new ValueError('bprop.init: the options must be an object such as { wasmUrl } or { wasmBinary }');
  }
  for (const key of Object.keys(options)) {
    if (key !== 'wasmUrl' && key !== 'wasmBinary') {
      throw new ValueError(`bprop.init: unknown option '${key}' (known: wasmUrl, wasmBinary)`);
    }
  }
  const { wasmUrl, wasmBinary } = options;
  if (wasmUrl !== undefined && wasmBinary !== undefined) {
    throw new ValueError('bprop.init: give wasmUrl or wasmBinary, not both');
  }
  if (wasmUrl !== undefined && typeof wasmUrl !== 'string' && !(wasmUrl instanceof URL)) {
    throw new ValueError(`bprop.init: wasmUrl must be a string or a URL, got ${typeof wasmUrl}`);
  }
  if (wasmBinary !== undefined && !(wasmBinary instanceof ArrayBuffer) && !ArrayBuffer.isView(wasmBinary)) {
    throw new ValueError('bprop.init: wasmBinary must be an ArrayBuffer or a typed array holding the module');
  }
  return { wasmUrl, wasmBinary };
}

function bytesOf(binary) {
  return binary instanceof ArrayBuffer ? new Uint8Array(binary)
    : new Uint8Array(binary.buffer, binary.byteOffset, binary.byteLength);
}

function resolveUrl(wasmUrl) {
  if (wasmUrl === undefined) return defaultWasmUrl();
  if (wasmUrl instanceof URL) return wasmUrl;
  const base = typeof location === 'object' && location !== null && location.href ? location.href : import.meta.url;
  return new URL(wasmUrl, base);
}

/**
 * What WebAssembly compiles: { bytes } or { response } (a fetch Response that can be compiled while it
 * downloads). Node's fetch cannot read file: URLs, so there the file is read.
 */
async function wasmSource({ wasmUrl, wasmBinary }) {
  if (wasmBinary !== undefined) return { bytes: bytesOf(wasmBinary) };
  const url = resolveUrl(wasmUrl);
  if (isNode && url.protocol === 'file:') {
    // Kept out of bundlers' view: browsers never reach this branch.
    const nodeFs = 'node:fs/promises';
    const { readFile } = await import(/* @vite-ignore */ /* webpackIgnore: true */ nodeFs);
    try {
      return { bytes: new Uint8Array(await readFile(url)) };
    } catch (e) {
      throw new BpropError(`bprop: cannot read the WebAssembly module ${url.href} (${e.code ?? e.message})`);
    }
  }
  let response;
  try {
    response = await fetch(url, { credentials: 'same-origin' });
  } catch (e) {
    throw new BpropError(`bprop: cannot fetch the WebAssembly module ${url.href} (${e.message})`);
  }
  if (!response.ok) {
    throw new BpropError(`bprop: cannot fetch the WebAssembly module ${url.href} (HTTP ${response.status})`);
  }
  return { response };
}

/**
 * Compiles and instantiates the module with the glue's imports. A response served as application/wasm is
 * compiled while it streams in; any other (a server that does not know the type) is read first.
 */
async function instantiate(source, imports) {
  const { response } = source;
  if (response) {
    const type = response.headers.get('Content-Type') ?? '';
    if (typeof WebAssembly.instantiateStreaming === 'function' && type.split(';')[0].trim() === 'application/wasm') {
      return WebAssembly.instantiateStreaming(response, imports);
    }
    return WebAssembly.instantiate(await response.arrayBuffer(), imports);
  }
  return WebAssembly.instantiate(source.bytes, imports);
}

/** How the last load compiled the module: 'streaming' or 'bytes' (tests and diagnostics). */
export let lastCompile = null;

/** Resolves to the initialised Emscripten module. */
export async function loadModule(options = {}) {
  const source = await wasmSource(options);
  lastCompile = source.response && source.response.headers.get('Content-Type')?.startsWith('application/wasm')
    ? 'streaming' : 'bytes';
  // The glue's ready promise does not settle when instantiation fails: race it against the failure.
  let fail;
  const failed = new Promise((_, reject) => { fail = reject; });
  const ready = createBprop({
    instantiateWasm(imports, receiveInstance) {
      instantiate(source, imports).then(
        ({ instance, module }) => receiveInstance(instance, module),
        (e) => fail(e instanceof BpropError ? e
          : new BpropError(`bprop: cannot instantiate the WebAssembly module (${e.message})`)),
      );
      return {}; // the exports arrive through receiveInstance
    },
  });
  return Promise.race([ready, failed]);
}
