// The npm package in real apps, in headless Chromium under a strict Content-Security-Policy
// (script-src 'self' 'wasm-unsafe-eval': no eval, no new Function, no inline script):
// - the packed tarball, installed into an empty app as a user installs it, bundled by Vite and by webpack 5 with
//   no plugin or loader (each must find the glue and emit the .wasm by itself);
// - the unbundled package imported with <script type="module"> (tests/browser/csp/).
// Each page computes gradients on the page and in a module Web Worker (tests/bundlers/app/checks.js) and checks that
// the policy is in force. Every app is served by the project's static server (scripts/serve.mjs) with the policy
// as a header. Skipped only when /usr/bin/chromium is missing.
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { serve } from '../../scripts/serve.mjs';
import { launchBrowser, missingBrowser } from '../demos/harness.mjs';
import { packAndInstall, root } from '../js/pack.mjs';

const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; img-src 'self' data:";
const skip = missingBrowser() ?? false;
let browser;
let app;

before(async () => {
  if (skip) return;
  ({ app } = packAndInstall('bprop-bundlers-'));
  cpSync(join(root, 'tests', 'bundlers', 'app'), app, { recursive: true });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
});

/** Serves `dir` with the policy, opens `path` and resolves to the page's results and the problems seen. */
async function runApp(dir, path) {
  const { server, url } = await serve({ root: dir, port: 0, headers: { 'Content-Security-Policy': CSP } });
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const problems = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console.error: ${msg.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
    });
    await page.goto(new URL(path, url).href);
    await page.waitForFunction(() => document.title === 'done', null, { timeout: 60_000 }).catch((e) => {
      throw new Error(`the app never finished: ${e.message}\n${problems.join('\n')}`);
    });
    const results = await page.evaluate(() => window.bpropResults);
    return { results, problems };
  } finally {
    await context.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

function checkResults({ results, problems }) {
  // The policy has to be in force, or the rest proves nothing about it; the eval attempt is itself reported
  // as a violation, and is the only one allowed.
  assert.equal(results.evalRefused, true, 'the Content-Security-Policy refuses eval');
  const others = [...problems, ...results.problems].filter((p) => !/unsafe-eval|eval/i.test(p));
  assert.deepEqual(others, []);
  assert.equal(results.grad, 12);
  assert.equal(results.secondOrder, 12);
  assert.equal(results.worker.error, undefined, results.worker.error);
  assert.ok(Math.abs(results.worker.value - 0.5 * Math.sin(0.5)) < 1e-6, `worker value ${results.worker.value}`);
  assert.ok(Math.abs(results.worker.grad - (Math.sin(0.5) + 0.5 * Math.cos(0.5))) < 1e-6, `worker grad ${results.worker.grad}`);
}

const emittedWasm = (dir) => readdirSync(dir, { recursive: true }).filter((f) => String(f).endsWith('.wasm'));

test('Vite builds the app from the packed tarball; it runs, with its module worker, under the CSP', { skip, timeout: 180_000 }, async () => {
  const vite = await import('vite');
  const outDir = join(app, 'dist-vite');
  await vite.build({
    root: app,
    configFile: false,
    logLevel: 'warn',
    worker: { format: 'es' }, // a module worker keeps its imports (Vite's default is a classic script)
    build: { outDir, emptyOutDir: true },
  });
  assert.ok(emittedWasm(outDir).length >= 1, 'Vite emitted the .wasm');
  checkResults(await runApp(outDir, '/'));
});

test('webpack 5 builds the app from the packed tarball; it runs, with its module worker, under the CSP', { skip, timeout: 180_000 }, async () => {
  const webpack = createRequire(join(root, 'package.json'))('webpack');
  const outDir = join(app, 'dist-webpack');
  const stats = await new Promise((resolve, reject) => {
    webpack({
      mode: 'production',
      context: app,
      entry: './main.js',
      output: { path: outDir, filename: 'main.js', clean: true },
      performance: { hints: false },
    }, (err, s) => (err ? reject(err) : resolve(s)));
  });
  assert.ok(!stats.hasErrors(), stats.toString({ all: false, errors: true }));
  cpSync(join(app, 'index.html'), join(outDir, 'index.html'));
  assert.ok(emittedWasm(outDir).length >= 1, 'webpack emitted the .wasm');
  checkResults(await runApp(outDir, '/'));
});

test('the unbundled package under the CSP: <script type="module"> and a module worker', { skip, timeout: 120_000 }, async () => {
  assert.ok(existsSync(join(root, 'web', 'dist', 'bprop.wasm')), 'the WebAssembly build is there');
  checkResults(await runApp(root, '/tests/browser/csp/'));
});
