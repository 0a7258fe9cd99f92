// Loading the module (web/loader.js): streaming compilation where the server says application/wasm, the
// fallback where it does not, init({ wasmUrl }) and init({ wasmBinary }), and clear errors for a missing or
// broken binary and for bad options.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { BpropError, ValueError } from '../../web/errors.js';
import * as loader from '../../web/loader.js';

const wasmPath = fileURLToPath(new URL('../../web/dist/bprop.wasm', import.meta.url));
const indexUrl = new URL('../../web/index.js', import.meta.url).href;
let server;
let base;

before(async () => {
  const wasm = readFileSync(wasmPath);
  server = http.createServer((req, res) => {
    if (req.url === '/typed.wasm') res.writeHead(200, { 'Content-Type': 'application/wasm' }).end(wasm);
    else if (req.url === '/untyped.wasm') res.writeHead(200, { 'Content-Type': 'application/octet-stream' }).end(wasm);
    else res.writeHead(404).end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});

after(() => new Promise((resolve) => server.close(resolve)));

/** The module works: a tensor goes in and comes back. */
function works(mod) {
  assert.equal(typeof mod.HEAPF32, 'object');
  assert.ok(Object.keys(mod).length > 10);
}

test('a binary served as application/wasm compiles while streaming', async () => {
  works(await loader.loadModule({ wasmUrl: `${base}/typed.wasm` }));
  assert.equal(loader.lastCompile, 'streaming');
});

test('a binary served with another content type is read first, then compiled', async () => {
  works(await loader.loadModule({ wasmUrl: new URL(`${base}/untyped.wasm`) }));
  assert.equal(loader.lastCompile, 'bytes');
});

test('wasmBinary: the bytes, as an ArrayBuffer or a typed array view', async () => {
  const bytes = readFileSync(wasmPath);
  works(await loader.loadModule({ wasmBinary: new Uint8Array(bytes) }));
  const padded = new Uint8Array(bytes.length + 16);
  padded.set(bytes, 8);
  works(await loader.loadModule({ wasmBinary: padded.subarray(8, 8 + bytes.length) }));
  works(await loader.loadModule({ wasmBinary: padded.slice(8, 8 + bytes.length).buffer }));
});

test('a missing binary is a BpropError with its URL and the HTTP status', async () => {
  await assert.rejects(loader.loadModule({ wasmUrl: `${base}/missing.wasm` }), (e) =>
    e instanceof BpropError && e.message.includes(`${base}/missing.wasm`) && e.message.includes('HTTP 404'));
  await assert.rejects(loader.loadModule({ wasmUrl: new URL('file:///no/such/bprop.wasm') }), (e) =>
    e instanceof BpropError && e.message.includes('/no/such/bprop.wasm') && e.message.includes('ENOENT'));
});

test('bytes that are not the module are a BpropError, not a hang', async () => {
  await assert.rejects(loader.loadModule({ wasmBinary: new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 99]) }), (e) =>
    e instanceof BpropError && /cannot instantiate the WebAssembly module/.test(e.message));
});

test('bad options are ValueErrors naming the option', () => {
  const bad = [
    [42, /must be an object/],
    [{ wasmURL: 'x' }, /unknown option 'wasmURL'/],
    [{ wasmUrl: 'a', wasmBinary: new Uint8Array(1) }, /not both/],
    [{ wasmUrl: 3 }, /wasmUrl must be a string or a URL/],
    [{ wasmBinary: [0, 97] }, /wasmBinary must be an ArrayBuffer or a typed array/],
  ];
  for (const [options, message] of bad) {
    assert.throws(() => loader.loadOptions(options), (e) => e instanceof ValueError && message.test(e.message));
  }
});

test('init({ wasmBinary }) loads once; a later init with other options is refused, the same ones are fine', () => {
  const script = `
    import { readFileSync } from 'node:fs';
    import { init } from ${JSON.stringify(indexUrl)};
    const bytes = readFileSync(${JSON.stringify(wasmPath)});
    const bp = await init({ wasmBinary: bytes });
    const again = await init({ wasmBinary: bytes });
    const plain = await init();
    let refused = '';
    await init({ wasmUrl: 'https://example.com/bprop.wasm' }).catch((e) => { refused = e.name; });
    console.log(bp === again && bp === plain, bp.grad((x) => x.mul(x))(bp.tensor(3)).item(), refused);
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(out.trim(), 'true 6 ValueError');
});
