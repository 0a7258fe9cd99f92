// The Tiny GPT page in headless Chromium (see harness.mjs): a GPT trains in a Web Worker on the bundled fortunes
// slice until its validation loss is well below a uniform guess, prints samples, draws the attention of every head
// for a prompt, keeps the heap flat, and continues from a checkpoint that `bprop train --model gpt` wrote natively.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { browserSuite, root, screenshot, waitReady } from './harness.mjs';

const suite = browserSuite();
const { skip } = suite;
const TARGET = 2.7; // validation loss; a uniform guess over 96 characters is 4.56
const LIMIT_MS = 120_000;

test(`gpt: the validation loss falls below ${TARGET} within ${LIMIT_MS / 1000} s; samples and attention maps`, { skip, timeout: 240_000 }, async (t) => {
  const { page, problems, context } = await suite.open('gpt.html');
  await waitReady(page, problems);
  // The smallest model of the page, to train fast next to the other tests.
  await page.selectOption('#layers', '1');
  await page.selectOption('#width', '32');
  await page.selectOption('#context', '32');
  await page.waitForFunction(() => document.body.dataset.layers === '1' && Number(document.body.dataset.steps) > 0, null, { timeout: 30_000 });
  const t0 = Date.now();
  await page
    .waitForFunction((target) => Number(document.body.dataset.valLoss) > 0 && Number(document.body.dataset.valLoss) < target, TARGET, {
      timeout: LIMIT_MS,
      polling: 200,
    })
    .catch(async (e) => {
      await screenshot(page, 'gpt');
      throw new Error(`validation loss ${await page.evaluate(() => document.body.dataset.valLoss)} after ${LIMIT_MS} ms: ${e.message}\n${problems.join('\n')}`);
    });
  t.diagnostic(`validation loss ${await page.evaluate(() => document.body.dataset.valLoss)} after ${Date.now() - t0} ms, ` +
    `${await page.evaluate(() => document.body.dataset.steps)} steps, ${await page.$eval('#stat-speed', (e) => e.textContent)}`);
  assert.match(await page.$eval('#stat-speed', (e) => e.textContent), /^\d+ tokens\/s$/);
  assert.equal(page.workers().length, 1, 'training runs in one Web Worker');
  // A sample has been printed (every 100 steps).
  await page.waitForFunction(() => Number(document.body.dataset.samples) > 0, null, { timeout: 60_000 });
  assert.match(await page.$eval('#sample', (e) => e.textContent), /^step \d+:\n[\s\S]{100,}/);
  // The heap stays flat while it trains.
  const tensors = async () => Number(await page.evaluate(() => document.body.dataset.tensors));
  const a = await tensors();
  await page.waitForFunction((s) => Number(document.body.dataset.steps) > s + 50, Number(await page.evaluate(() => document.body.dataset.steps)));
  assert.equal(await tensors(), a, 'live tensors between progress messages');
  // Attention maps: one canvas per layer and head, for the prompt.
  await page.fill('#prompt', 'The early bird gets the worm.');
  await page.click('#show');
  await page.waitForFunction(() => Number(document.body.dataset.maps) === 4, null, { timeout: 30_000 });
  assert.equal(await page.$$eval('#maps canvas', (cs) => cs.length), 4);
  assert.equal(await page.$eval('#maps canvas', (c) => c.width), 'The early bird gets the worm.'.length * 7);
  await page.click('#pause');
  await screenshot(page, 'gpt');
  assert.deepEqual(problems, [], 'no console errors, page errors or failed requests');
  await context.close();
});

const bprop = join(root, 'build', 'native', 'bprop');
const noNative = existsSync(bprop) ? false : 'no native build (build/native/bprop)';

test('gpt: a checkpoint trained natively loads and goes on training', { skip: skip || noNative, timeout: 180_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bprop-gpt-demo-'));
  try {
    const ckpt = join(dir, 'native-gpt.safetensors');
    const r = spawnSync(bprop, ['train', '--model', 'gpt', '--data', `text:${join(root, 'demos/web/data/fortunes/train.txt')}`,
      '--context', '32', '--layers', '2', '--heads', '2', '--width', '32', '--steps', '150', '--warmup', '10',
      '--eval-interval', '150', '--eval-batches', '2', '--sample-tokens', '0', '--out', ckpt], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const { page, problems, context } = await suite.open('gpt.html');
    await waitReady(page, problems);
    await page.setInputFiles('#checkpoint', ckpt);
    await page.waitForFunction(() => document.body.dataset.layers === '2' && Number(document.body.dataset.steps) > 150, null, { timeout: 60_000 });
    assert.match(await page.$eval('#stat-model', (e) => e.textContent), /2 layers · width 32 · 2 heads · context 32/);
    assert.match(await page.$eval('#status', (e) => e.textContent), /continuing native-gpt\.safetensors/);
    // Trained natively for 150 steps: its first validation in the page is already below a fresh model's.
    await page.waitForFunction(() => Number(document.body.dataset.valLoss) > 0, null, { timeout: 60_000 });
    const val = Number(await page.evaluate(() => document.body.dataset.valLoss));
    assert.ok(val < 3.3, `validation loss ${val} after loading`);
    await page.waitForFunction(() => Number(document.body.dataset.samples) > 0, null, { timeout: 30_000 });
    await page.click('#pause');
    assert.deepEqual(problems, []);
    await context.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
