// The package in a real browser: scripts/serve.mjs serves the repository, headless Chromium (Debian's
// /usr/bin/chromium driven by playwright-core; no browser is ever downloaded) opens tests/browser/fixture.html,
// which imports /web/index.js with a plain <script type="module">, runs tests/vectors/unary.json through the
// vector runner and the cube example to third order, and leaves the results on window.bpropResults.
// A screenshot of the page goes to test-output/browser/package.png.
// Skipped only when /usr/bin/chromium is missing; any other problem fails.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { launchBrowser, missingBrowser, startServer } from '../demos/harness.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const VECTOR_FILE = 'tests/vectors/unary.json';
const SCREENSHOT = join(root, 'test-output', 'browser', 'package.png');

let baseUrl = null;
let stopServer;

before(async () => {
  ({ url: baseUrl, stop: stopServer } = await startServer());
});

after(async () => {
  await stopServer?.();
});

test('scripts/serve.mjs serves the package files with their content types', async () => {
  const expect = [
    ['web/index.js', 'text/javascript'],
    ['web/dist/bprop.mjs', 'text/javascript'],
    ['web/dist/bprop.cjs', 'text/javascript'],
    ['web/dist/bprop.wasm', 'application/wasm'],
    ['web/bin/bprop-check.mjs', 'text/javascript'],
    ['tests/browser/fixture.html', 'text/html'],
    [VECTOR_FILE, 'application/json'],
  ];
  for (const [path, type] of expect) {
    const r = await fetch(new URL(path, baseUrl));
    assert.equal(r.status, 200, `GET /${path}`);
    assert.equal(r.headers.get('content-type').split(';')[0], type, `content type of /${path}`);
    const body = Buffer.from(await r.arrayBuffer());
    assert.ok(body.equals(readFileSync(join(root, path))), `/${path} is served unchanged`);
  }
  for (const path of ['no/such/file.js', '.git/HEAD', '.gitignore']) {
    const r = await fetch(new URL(path, baseUrl));
    await r.arrayBuffer();
    assert.equal(r.status, 404, `GET /${path}`);
  }
  const post = await fetch(baseUrl, { method: 'POST' });
  await post.arrayBuffer();
  assert.equal(post.status, 405);
});

test('headless Chromium loads the package with <script type="module">: vectors and grad', { timeout: 180_000 }, async (t) => {
  const missing = missingBrowser();
  if (missing) {
    t.skip(missing);
    return;
  }

  const started = performance.now();
  const browser = await launchBrowser();
  try {
    const context = await browser.newContext({ viewport: { width: 1000, height: 800 } });
    const page = await context.newPage();
    page.setDefaultTimeout(60_000);

    // Anything that goes wrong in the page is collected and fails the test.
    // The first one also ends the wait for results: a module that fails to load never reports anything.
    const problems = [];
    let problemSeen;
    const firstProblem = new Promise((resolve) => {
      problemSeen = resolve;
    });
    const problem = (text) => {
      problems.push(text);
      problemSeen();
    };
    page.on('console', (msg) => {
      if (msg.type() === 'error') problem(`console.error: ${msg.text()}`);
    });
    page.on('pageerror', (e) => problem(`page error: ${e.message}`));
    page.on('requestfailed', (r) => problem(`request failed: ${r.url()} (${r.failure()?.errorText})`));
    page.on('response', (r) => {
      if (r.status() >= 400) problem(`HTTP ${r.status()}: ${r.url()}`);
    });
    const served = new Map();
    page.on('response', (r) => served.set(new URL(r.url()).pathname, r.headers()['content-type'] ?? ''));

    const launchedMs = performance.now() - started;
    await page.goto(new URL('tests/browser/fixture.html', baseUrl).href, { waitUntil: 'load' });
    await Promise.race([
      page.waitForFunction(() => window.bpropResults !== undefined || window.bpropError !== undefined),
      // After a problem, a moment for the page to report whatever else it will.
      firstProblem.then(() => new Promise((resolve) => setTimeout(resolve, 500))),
    ]);
    const { results, error } = await page.evaluate(() => ({ results: window.bpropResults, error: window.bpropError }));
    const pageMs = performance.now() - started - launchedMs;

    mkdirSync(dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    await context.close();

    assert.equal(error, undefined, `the fixture page threw:\n${error}\n${problems.join('\n')}`);
    assert.deepEqual(problems, [], 'no console errors, page errors or failed requests');
    assert.ok(results, 'the fixture page reported its results');
    assert.ok(served.has('/web/index.js') && served.has('/web/dist/bprop.mjs') && served.has('/web/dist/bprop.wasm'),
      `the page loaded the package from the server (${[...served.keys()].join(', ')})`);

    // (a) The whole vector file, case by case, as the native runner sees it.
    const cases = JSON.parse(readFileSync(join(root, VECTOR_FILE), 'utf8')).cases;
    const v = results.vectors;
    assert.equal(v.file, VECTOR_FILE);
    assert.deepEqual(v.errors, [], `${VECTOR_FILE} is well formed`);
    assert.deepEqual(v.failures, [], `every case of ${VECTOR_FILE} passes in the browser`);
    assert.ok(cases.length > 0);
    assert.equal(v.cases, cases.length);
    assert.equal(v.passed, cases.length);
    assert.equal(v.failed, 0);
    assert.deepEqual(v.names, cases.map((c) => c.name), 'every case ran, in file order');

    // Chromium (since 114) has WebAssembly relaxed SIMD: the GEMM runs the fused multiply-add tile.
    assert.equal(results.gemm.kernel, 'relaxed-simd');
    assert.ok(results.gemm.maxError < 1e-4, `matmul error ${results.gemm.maxError}`);

    // (b) cube(x) = x^3 at 2 and its derivatives to third order.
    assert.deepEqual(results.grad, { f: 8, df: 12, d2f: 12, d3f: 6, dtype: 'float32' });

    // A C++ shape error arrives as the package's ShapeError with the core's message; the module keeps working.
    assert.deepEqual(results.shapeError, {
      name: 'ShapeError',
      kind: 'shape',
      message: "For 'add', the shapes of 'x' (2, 3) and 'y' (4,) cannot be broadcast (dimension 1: 3 vs 4)",
      isShapeError: true,
      isBpropError: true,
      isError: true,
    });
    assert.equal(results.afterError, 6);

    t.diagnostic(`${results.userAgent}`);
    t.diagnostic(
      `launch ${launchedMs.toFixed(0)} ms, page ${pageMs.toFixed(0)} ms (init ${results.timings.initMs.toFixed(0)} ms, ` +
        `${v.cases} vector cases ${results.timings.vectorsMs.toFixed(0)} ms); screenshot ${SCREENSHOT}`,
    );
  } finally {
    await browser.close();
  }
});
