// Shared by the demo page tests: starts scripts/serve.mjs on a free port, launches Debian's headless Chromium
// through playwright-core, opens a page, collects console errors, page errors and failed requests, and saves a
// screenshot under test-output/demos/.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../../', import.meta.url));
export const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
export const SHOTS = join(root, 'test-output', 'demos');

/** Why the browser tests cannot run here, or null. */
export function missingBrowser() {
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} is missing: install the Debian package 'chromium' to run the demo tests`;
  return null;
}

/** Starts `node scripts/serve.mjs --port 0`; resolves to { child, url } once it prints its address. */
export function startServer() {
  const child = spawn(process.execPath, [join(root, 'scripts', 'serve.mjs'), '--port', '0'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  };
  process.once('exit', stop);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`scripts/serve.mjs did not report its address within 15 s\n${out}${err}`));
    }, 15_000);
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const m = /at (http:\/\/\S+\/)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          child,
          url: m[1],
          stop: () =>
            new Promise((res) => {
              if (child.exitCode !== null || child.signalCode !== null) return res();
              child.once('exit', () => res());
              stop();
            }),
        });
      }
    });
    child.stderr.on('data', (chunk) => {
      err += chunk;
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`scripts/serve.mjs exited (${signal ?? code}) before listening\n${out}${err}`));
    });
  });
}

export async function launchBrowser() {
  let chromium;
  try {
    ({ chromium } = await import('playwright-core'));
  } catch (e) {
    throw new Error(`playwright-core is a devDependency of bprop: run npm install (${e.message})`);
  }
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 60_000 });
}

/**
 * Opens baseUrl + demos/web/<name> in a new context; returns { page, problems, context }. problems collects
 * console errors, page errors, failed requests and HTTP errors.
 */
export async function openPage(browser, baseUrl, name, { width = 1280, height = 900 } = {}) {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  page.setDefaultTimeout(60_000);
  const problems = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console.error: ${msg.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} (${r.failure()?.errorText})`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  await page.goto(new URL(`demos/web/${name}`, baseUrl).href, { waitUntil: 'load' });
  return { page, problems, context };
}

/**
 * One server and one browser for the page tests of a file: registers the before/after hooks and returns
 * { skip, url, open(name, options) }. skip is the reason the tests cannot run (no Chromium), else false.
 */
export function browserSuite() {
  let server;
  let browser;
  const skip = missingBrowser() ?? false;
  before(async () => {
    if (skip) return;
    server = await startServer();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });
  return {
    skip,
    get url() {
      return server.url;
    },
    open: (name, options) => openPage(browser, server.url, name, options),
  };
}

/** Waits for document.body.dataset.ready === '1' (pages set it when their work is done and on screen). */
export async function waitReady(page, problems) {
  await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60_000 }).catch((e) => {
    throw new Error(`the page never became ready: ${e.message}\n${problems.join('\n')}`);
  });
}

export async function screenshot(page, name) {
  mkdirSync(SHOTS, { recursive: true });
  const path = join(SHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
