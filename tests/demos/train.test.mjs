// The training page in headless Chromium (see harness.mjs): training runs in a Web Worker and reaches a set
// accuracy on the spiral, and a set held-out test accuracy on the bundled Fashion-MNIST subset, within a bounded time;
// with O2 mixed precision (bfloat16, float16 with a dynamic loss scale) the loss goes down and the heap stays flat.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { browserSuite, screenshot, waitReady } from './harness.mjs';

const suite = browserSuite();
const { skip } = suite;
const TARGET = 0.95;
const LIMIT_MS = 90_000;
const FASHION_TARGET = 0.7;
const FASHION_LIMIT_MS = 120_000;

test(`train: the spiral reaches ${TARGET * 100}% accuracy within ${LIMIT_MS / 1000} s, in a worker`, { skip, timeout: 180_000 }, async (t) => {
  const t0 = Date.now();
  const { page, problems, context } = await suite.open('train.html');
  await waitReady(page, problems);
  assert.equal(await page.$eval('#dataset', (s) => s.value), 'spiral');
  await page
    .waitForFunction((target) => Number(document.body.dataset.accuracy) >= target, TARGET, { timeout: LIMIT_MS, polling: 100 })
    .catch(async (e) => {
      await screenshot(page, 'train');
      throw new Error(`accuracy ${await page.evaluate(() => document.body.dataset.accuracy)} after ${LIMIT_MS} ms: ${e.message}\n${problems.join('\n')}`);
    });
  const ms = Date.now() - t0;
  // The main thread stays free while the worker trains (a generous bound: other tests may share the CPU).
  const lag = await page.evaluate(() => new Promise((res) => { const s = performance.now(); setTimeout(() => res(performance.now() - s), 0); }));
  assert.ok(lag < 2000, `main thread lag ${lag} ms`);
  assert.equal(page.workers().length, 1, 'training runs in one Web Worker');
  const speed = await page.$eval('#stat-speed', (e) => e.textContent);
  assert.match(speed, /^\d+ steps\/s$/);
  t.diagnostic(`spiral: ${TARGET * 100}% ${ms} ms after opening the page, ${await page.evaluate(() => document.body.dataset.steps)} steps, ${speed}`);
  await page.click('#pause');
  await screenshot(page, 'train');
  assert.deepEqual(problems, [], 'no console errors, page errors or failed requests');
  await context.close();
});

test(`train: graph mode (bp.jit of the whole step) reaches ${TARGET * 100}% on the spiral too`, { skip, timeout: 180_000 }, async (t) => {
  const { page, problems, context } = await suite.open('train.html');
  await waitReady(page, problems);
  await page.selectOption('#mode', 'graph');
  await page
    .waitForFunction((target) => Number(document.body.dataset.accuracy) >= target, TARGET, { timeout: LIMIT_MS, polling: 100 })
    .catch(async (e) => {
      await screenshot(page, 'train-graph');
      throw new Error(`accuracy ${await page.evaluate(() => document.body.dataset.accuracy)} after ${LIMIT_MS} ms: ${e.message}\n${problems.join('\n')}`);
    });
  const code = await page.$eval('#code', (e) => e.textContent);
  assert.match(code, /const step = bp\.jit\(cell\);/);
  const speed = await page.$eval('#stat-speed', (e) => e.textContent);
  assert.match(speed, /^\d+ steps\/s$/);
  t.diagnostic(`spiral in graph mode: ${speed}`);
  await page.click('#pause');
  assert.deepEqual(problems, [], 'no console errors, page errors or failed requests');
  await context.close();
});

test(`train: Fashion-MNIST reaches ${FASHION_TARGET * 100}% held-out accuracy within ${FASHION_LIMIT_MS / 1000} s`, { skip, timeout: 240_000 }, async (t) => {
  const { page, problems, context } = await suite.open('train.html');
  await waitReady(page, problems);
  await page.selectOption('#dataset', 'fashion');
  const t0 = Date.now();
  await page
    .waitForFunction(
      (target) => document.body.dataset.dataset === 'fashion' && Number(document.body.dataset.accuracy) >= target,
      FASHION_TARGET,
      { timeout: FASHION_LIMIT_MS, polling: 100 },
    )
    .catch(async (e) => {
      await screenshot(page, 'train-fashion');
      const status = await page.$eval('#status', (el) => el.textContent);
      throw new Error(`test accuracy ${await page.evaluate(() => document.body.dataset.accuracy)} after ${FASHION_LIMIT_MS} ms (${status}): ${e.message}\n${problems.join('\n')}`);
    });
  const ms = Date.now() - t0;
  const lag = await page.evaluate(() => new Promise((res) => { const s = performance.now(); setTimeout(() => res(performance.now() - s), 0); }));
  assert.ok(lag < 2000, `main thread lag ${lag} ms while the worker trains`);
  await page.click('#pause');
  // The decision boundary gives way to the grid of test images, each with its predicted and true class names.
  assert.equal(await page.$eval('#toy-view', (e) => e.hidden), true);
  const tiles = await page.$$eval('#fgrid .tile', (els) =>
    els.map((e) => ({ pred: e.dataset.pred, truth: e.dataset.truth, correct: e.dataset.correct, text: e.querySelector('figcaption').textContent })),
  );
  assert.equal(tiles.length, 30);
  const names = ['T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat', 'Sandal', 'Shirt', 'Sneaker', 'Bag', 'Ankle boot'];
  for (const tile of tiles) {
    assert.ok(tile.pred !== undefined, 'every shown image has a prediction');
    assert.equal(tile.correct, tile.pred === tile.truth ? '1' : '0');
    assert.ok(tile.text.includes(names[Number(tile.pred)]) && tile.text.endsWith(names[Number(tile.truth)]), tile.text);
  }
  assert.ok(tiles.filter((x) => x.correct === '1').length >= 15, 'most shown test images are classified right');
  assert.match(await page.$eval('#stat-acc', (e) => e.textContent), /^test accuracy \d+\.\d% \(training \d+\.\d%\)$/);
  assert.match(await page.$eval('#stat-speed', (e) => e.textContent), /^\d+ steps\/s$/);
  const code = await page.$eval('#code', (e) => e.textContent);
  assert.match(code, /fashion-subset\.bin/);
  assert.match(code, /new bp\.nn\.Dense\(784, 16, \{ activation: 'tanh' \}\)/);
  assert.match(code, /new bp\.nn\.Dense\(16, 10\)/);
  assert.equal(page.workers().length, 1, 'training runs in one Web Worker');
  t.diagnostic(`fashion: ${FASHION_TARGET * 100}% held-out in ${ms} ms, ${await page.evaluate(() => document.body.dataset.steps)} steps, ${await page.$eval('#stat-acc', (e) => e.textContent)}`);
  await screenshot(page, 'train-fashion');

  // Back to a toy set: the boundary returns and training goes on as before.
  await page.selectOption('#dataset', 'xor');
  await page.waitForFunction(() => document.body.dataset.dataset === 'xor' && Number(document.body.dataset.steps) > 0);
  assert.equal(await page.$eval('#toy-view', (e) => e.hidden), false);
  assert.equal(await page.$eval('#fashion-view', (e) => e.hidden), true);
  assert.deepEqual(problems, [], 'no console errors, page errors or failed requests');
  await context.close();
});

/**
 * Runs the page's current settings for `steps` steps at least: { first, last } progress samples of the run
 * (steps, mean loss of a tick, live tensors in the worker's heap), taken as early and as late as the polling sees.
 */
async function sampleRun(page, precision, steps, problems) {
  const sample = () => page.evaluate(() => ({ ...document.body.dataset }));
  const wait = (min) =>
    page
      .waitForFunction(
        ([p, n]) => document.body.dataset.precision === p && Number(document.body.dataset.steps) >= n,
        [precision, min],
        { timeout: 30_000, polling: 10 },
      )
      .catch(async (e) => {
        throw new Error(`${precision}: ${JSON.stringify(await sample())}: ${e.message}\n${problems.join('\n')}`);
      });
  await wait(1);
  const first = await sample();
  await wait(Number(first.steps) + steps);
  return { first, last: await sample() };
}

test('train: O2 bfloat16 and O2 float16 with a dynamic loss scale train the spiral, eager and in graph mode', { skip, timeout: 120_000 }, async (t) => {
  const { page, problems, context } = await suite.open('train.html');
  await waitReady(page, problems);
  assert.equal(await page.$eval('#precision', (s) => s.value), 'float32');
  assert.equal(await page.$eval('#stat-precision', (e) => e.textContent), 'float32');
  for (const [precision, mode] of [['bfloat16', 'pynative'], ['float16', 'pynative'], ['float16', 'graph']]) {
    await page.selectOption('#mode', mode);
    await page.selectOption('#precision', precision);
    const { first, last } = await sampleRun(page, precision, 200, problems);
    const [l0, l1] = [Number(first.loss), Number(last.loss)];
    assert.ok(Number.isFinite(l0) && Number.isFinite(l1), `${precision} ${mode}: losses ${l0}, ${l1}`);
    assert.ok(l1 < 0.7 * l0, `${precision} ${mode}: the loss goes down (${l0} at step ${first.steps}, ${l1} at step ${last.steps})`);
    // The step frees what it makes: no more live tensors after 200 steps than after the first tick (fewer once
    // the collector frees the replaced run's weights).
    assert.ok(Number(last.tensors) <= Number(first.tensors), `${precision} ${mode}: ${first.tensors} then ${last.tensors} live tensors`);
    const stat = await page.$eval('#stat-precision', (e) => e.textContent);
    const code = await page.$eval('#code', (e) => e.textContent);
    assert.ok(code.includes(`bp.amp.autoMixedPrecision(net, 'O2', '${precision}');`), code);
    assert.equal(code.includes('const step = bp.jit(cell);'), mode === 'graph');
    assert.match(await page.$eval('#status', (e) => e.textContent), new RegExp(`\\(O2 ${precision} mixed precision\\)$`));
    if (precision === 'float16') {
      assert.match(stat, /^O2 float16, loss scale \d+, \d+ steps skipped$/);
      assert.ok(Number(/loss scale (\d+)/.exec(stat)[1]) >= 1, stat);
      assert.match(code, /new bp\.nn\.TrainOneStepWithLossScaleCell\(.*, optimizer, scaler\);/);
    } else {
      assert.equal(stat, 'O2 bfloat16');
      assert.doesNotMatch(code, /LossScale/);
    }
    t.diagnostic(`${precision} ${mode}: loss ${l0.toFixed(4)} at step ${first.steps}, ${l1.toFixed(4)} at step ${last.steps}; ${stat}; ${await page.$eval('#stat-speed', (e) => e.textContent)}`);
  }
  await page.click('#pause');
  await screenshot(page, 'train-amp');
  assert.deepEqual(problems, [], 'no console errors, page errors or failed requests');
  await context.close();
});
