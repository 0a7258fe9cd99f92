// The index page and the derivative explorer in headless Chromium (see harness.mjs).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { browserSuite, screenshot, waitReady } from './harness.mjs';

const suite = browserSuite();
const { skip } = suite;

test('index page links every demo and loads cleanly', { skip, timeout: 120_000 }, async () => {
  const { page, problems, context } = await suite.open('index.html');
  await waitReady(page, problems);
  const links = await page.$$eval('.card a', (as) => as.map((a) => a.getAttribute('href')));
  assert.deepEqual(links, ['explorer.html', 'graph.html', 'custom.html', 'train.html', 'gpt.html']);
  // The directory URL that npm start prints serves the index page.
  const dir = await fetch(new URL('demos/web/', suite.url));
  assert.equal(dir.status, 200);
  assert.match(await dir.text(), /<title>bprop demos<\/title>/);
  for (const href of links) {
    const r = await fetch(new URL(`demos/web/${href}`, suite.url));
    await r.arrayBuffer();
    assert.equal(r.status, 200, `GET ${href}`);
  }
  await screenshot(page, 'index');
  assert.deepEqual(problems, []);
  await context.close();
});

test('explorer: x^3 gives f\'(2) = 12 and f\'\'(2) = 12; bad input gives a message', { skip, timeout: 180_000 }, async () => {
  const { page, problems, context } = await suite.open('explorer.html');
  await waitReady(page, problems);
  // The default expression is plotted.
  assert.equal(await page.$eval('#message', (e) => e.dataset.kind), 'ok');

  await page.fill('#expr', 'x^3');
  await page.waitForFunction(() => document.body.dataset.ready === '1' && document.getElementById('code').textContent.includes('// f(x) = x^3\n'));
  await page.fill('#x0', '2');
  const read = () =>
    page.evaluate(() => Object.fromEntries(['r-f', 'r-d1', 'r-d2', 'r-d3'].map((id) => [id, document.getElementById(id).textContent])));
  let r = await read();
  assert.deepEqual(r, { 'r-f': '8', 'r-d1': '12', 'r-d2': '12', 'r-d3': '6' });
  assert.match(await page.$eval('#code', (e) => e.textContent), /bp\.grad\(\(x\) => df\(x\)\.sum\(\)\)/);

  // Hover read-out over the plot.
  const box = await page.$eval('#plot', (c) => { const b = c.getBoundingClientRect(); return { x: b.x, y: b.y, w: b.width, h: b.height }; });
  await page.mouse.move(box.x + box.w * 0.6, box.y + box.h / 2);
  assert.match(await page.$eval('#hover', (e) => e.textContent), /^x = .*f′ = .*f‴ = /);

  // Other expressions of the brief.
  for (const [src, x0, want] of [
    ['tanh(3x)', '0', ['0', '3', '0', '-54']],
    ['log(1 + exp(x))', '0', ['0.693147181', '0.5', '0.25', '0']],
    ['sin(x) * x^2', '0', ['0', '0', '0', '6']],
  ]) {
    await page.fill('#expr', src);
    await page.waitForFunction((s) => document.body.dataset.ready === '1' && document.getElementById('code').textContent.includes(`// f(x) = ${s}\n`), src);
    await page.fill('#x0', x0);
    r = await read();
    const got = Object.values(r).map(Number);
    want.forEach((w, i) => assert.ok(Math.abs(got[i] - Number(w)) < 1e-6, `${src} at ${x0}: ${JSON.stringify(r)}`));
  }

  await page.fill('#expr', 'x^3');
  await page.waitForFunction(() => document.body.dataset.ready === '1' && document.getElementById('code').textContent.includes('// f(x) = x^3\n'));
  await page.fill('#x0', '2');
  await screenshot(page, 'explorer');

  await page.fill('#expr', 'sin(x');
  await page.waitForFunction(() => document.body.dataset.ready === '1' && document.getElementById('message').dataset.kind === 'parse-error');
  assert.match(await page.$eval('#message', (e) => e.textContent), /Cannot parse “sin\(x”: missing '\)'/);
  await page.fill('#expr', 'foo(x)');
  await page.waitForFunction(() => document.body.dataset.ready === '1' && document.getElementById('message').textContent.includes('foo'));
  assert.match(await page.$eval('#message', (e) => e.textContent), /unknown name 'foo'/);
  await screenshot(page, 'explorer-error');

  assert.deepEqual(problems, [], 'no console errors, page errors or failed requests');
  await context.close();
});
