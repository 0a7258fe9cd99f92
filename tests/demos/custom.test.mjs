// The custom backward operator page in headless Chromium (see harness.mjs).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { browserSuite, screenshot, waitReady } from './harness.mjs';

const suite = browserSuite();
const { skip } = suite;

const values = (page) =>
  page.evaluate(() => Object.fromEntries(['r-f', 'r-auto', 'r-custom'].map((id) => [id, Number(document.getElementById(id).dataset.value)])));

/** Types src into the bprop box and waits until the page applied it. */
async function setBprop(page, src) {
  await page.fill('#bprop', src);
  await page.click('#apply');
  await page.waitForFunction((s) => document.body.dataset.ready === '1' && document.getElementById('jscode').textContent.includes(s), src);
}

test('custom bprop: editing the bprop changes the gradient; automatic one stays', { skip, timeout: 180_000 }, async () => {
  const { page, problems, context } = await suite.open('custom.html');
  await waitReady(page, problems);
  await page.fill('#x0', '1.5');

  // Gradient clipping: L = y^3/3 with y = x, dout = x^2 = 2.25 is clipped to 1.
  assert.equal(await page.$eval('#preset', (s) => s.value), 'clip');
  let v = await values(page);
  assert.ok(Math.abs(v['r-f'] - 1.125) < 1e-12, JSON.stringify(v));
  assert.ok(Math.abs(v['r-auto'] - 2.25) < 1e-12, JSON.stringify(v));
  assert.equal(v['r-custom'], 1);
  assert.match(await page.$eval('#pycode', (e) => e.textContent), /def bprop\(self, x, out, dout\):\n {8}return \(ops\.clamp\(dout, min=-1, max=1\),\)/);

  await setBprop(page, '(x, out, dout) => [dout.clamp({ min: -2, max: 2 })]');
  v = await values(page);
  assert.equal(v['r-custom'], 2);
  assert.ok(Math.abs(v['r-auto'] - 2.25) < 1e-12);

  await setBprop(page, '(x, out, dout) => [dout.mul(x).mul(2)]');
  v = await values(page);
  assert.ok(Math.abs(v['r-custom'] - 2.25 * 3) < 1e-12, JSON.stringify(v));
  assert.match(await page.$eval('#pycode', (e) => e.textContent), /return \(\(dout \* x\) \* 2,\)/);
  await screenshot(page, 'custom');

  // A broken bprop gives a message, not a crash; the page keeps working.
  await page.fill('#bprop', '(x, out, dout) => [dout.nosuchop()]');
  await page.click('#apply');
  await page.waitForFunction(() => document.body.dataset.ready === '1' && document.getElementById('message').dataset.kind === 'error');
  assert.match(await page.$eval('#message', (e) => e.textContent), /nosuchop/);
  await page.fill('#bprop', '(x, out, dout) => [dout');
  await page.click('#apply');
  await page.waitForFunction(() => document.body.dataset.ready === '1' && document.getElementById('message').textContent.startsWith('Cannot use this bprop'));

  // Straight-through estimator: round has zero gradient, the STE passes dout = round(x) through.
  await page.selectOption('#preset', 'ste');
  await page.waitForFunction(() => document.body.dataset.ready === '1' && document.getElementById('jscode').textContent.includes('x.round()'));
  v = await values(page);
  assert.equal(v['r-auto'], 0);
  assert.equal(v['r-custom'], 2);
  await screenshot(page, 'custom-ste');
  assert.deepEqual(problems, [], 'no console errors, page errors or failed requests');
  await context.close();
});

test('custom bprop, registered primitive: editing the bprop changes the gradient; each version gets its own name', { skip, timeout: 180_000 }, async () => {
  const { page, problems, context } = await suite.open('custom.html');
  await waitReady(page, problems);
  await page.fill('#x0', '1.5');
  await page.selectOption('#mode', 'primitive');
  await page.waitForFunction(() => document.body.dataset.ready === '1' && document.body.dataset.primitive === 'clip_grad_v1');
  assert.equal(await page.$eval('#js-title', (e) => e.textContent), 'The primitive in JavaScript');
  const js = await page.$eval('#jscode', (e) => e.textContent);
  assert.match(js, /bp\.registerPrimitive\(\{\n {2}name: 'clip_grad_v1',/);
  assert.match(js, /bprop: \(x, out, dout\) => \[dout\.clamp\(\{ min: -1, max: 1 \}\)\],/);
  assert.match(js, /const y = bp\.ops\.clip_grad_v1\(x\);/);
  const py = await page.$eval('#pycode', (e) => e.textContent);
  assert.match(py, /class ClipGrad\(PrimitiveWithInfer\):/);
  assert.match(py, /def infer_shape\(self, x_shape\):\n {8}return x_shape/);
  assert.match(py, /@bprop_getters\.register\(ClipGrad\)\ndef get_bprop_clip_grad\(self\):\n {4}def bprop\(x, out, dout\):\n {8}return \(ops\.clamp\(dout, min=-1, max=1\),\)\n {4}return bprop/);
  assert.match(py, /ms\.Tensor\(\[1\.5\], ms\.float64\)/);
  // The primitive's forward (a kernel on typed arrays) gives the same L; its bprop clips dout = 2.25 to 1.
  let v = await values(page);
  assert.ok(Math.abs(v['r-f'] - 1.125) < 1e-12, JSON.stringify(v));
  assert.ok(Math.abs(v['r-auto'] - 2.25) < 1e-12, JSON.stringify(v));
  assert.equal(v['r-custom'], 1);

  // An edit registers a new primitive; the read-out follows it, the automatic gradient does not move.
  await setBprop(page, '(x, out, dout) => [dout.clamp({ min: -2, max: 2 })]');
  assert.equal(await page.evaluate(() => document.body.dataset.primitive), 'clip_grad_v2');
  v = await values(page);
  assert.equal(v['r-custom'], 2);
  assert.ok(Math.abs(v['r-auto'] - 2.25) < 1e-12);
  await setBprop(page, '(x, out, dout) => [dout.mul(x).mul(2)]');
  assert.equal(await page.evaluate(() => document.body.dataset.primitive), 'clip_grad_v3');
  v = await values(page);
  assert.ok(Math.abs(v['r-custom'] - 2.25 * 3) < 1e-12, JSON.stringify(v));
  assert.match(await page.$eval('#pycode', (e) => e.textContent), /def bprop\(x, out, dout\):\n {8}return \(\(dout \* x\) \* 2,\)/);
  await screenshot(page, 'custom-primitive');

  // A bprop applied before is not registered twice (registerPrimitive would refuse the name): its primitive is reused.
  await setBprop(page, '(x, out, dout) => [dout.clamp({ min: -2, max: 2 })]');
  assert.equal(await page.evaluate(() => document.body.dataset.primitive), 'clip_grad_v2');
  assert.match(await page.$eval('#message', (e) => e.textContent), /reusing the primitive clip_grad_v2/);
  assert.equal((await values(page))['r-custom'], 2);

  // A bprop that fails when called gives a message; the page keeps working.
  await page.fill('#bprop', '(x, out, dout) => [dout.nosuchop()]');
  await page.click('#apply');
  await page.waitForFunction(() => document.body.dataset.ready === '1' && document.getElementById('message').dataset.kind === 'error');
  assert.match(await page.$eval('#message', (e) => e.textContent), /nosuchop/);

  // The edited bprop carries over to the other way, which gives the same gradient.
  await setBprop(page, '(x, out, dout) => [dout.mul(3)]');
  assert.equal((await values(page))['r-custom'], 2.25 * 3);
  await page.selectOption('#mode', 'cell');
  await page.waitForFunction(() => document.body.dataset.ready === '1' && document.body.dataset.primitive === '');
  assert.match(await page.$eval('#jscode', (e) => e.textContent), /class Custom extends bp\.Cell/);
  assert.equal((await values(page))['r-custom'], 2.25 * 3);

  // Straight-through estimator as a primitive: its forward rounds half to even like the built-in round.
  await page.selectOption('#mode', 'primitive');
  await page.selectOption('#preset', 'ste');
  await page.waitForFunction(() => document.body.dataset.ready === '1' && document.body.dataset.primitive === 'round_ste_v1');
  for (const [x0, y] of [[2.5, 2], [1.5, 2], [-0.5, 0], [-1.5, -2], [0.7, 1]]) {
    await page.fill('#x0', String(x0));
    v = await values(page);
    assert.deepEqual([v['r-f'], v['r-auto'], v['r-custom']], [(y * y) / 2, 0, y], `x = ${x0}`);
  }
  assert.match(await page.$eval('#pycode', (e) => e.textContent), /@bprop_getters\.register\(RoundSTE\)/);
  assert.deepEqual(problems, [], 'no console errors, page errors or failed requests');
  await context.close();
});
