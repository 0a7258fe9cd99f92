// The backward-graph viewer in headless Chromium (see harness.mjs).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { browserSuite, screenshot, waitReady } from './harness.mjs';

const suite = browserSuite();
const { skip } = suite;

const labels = (page, kind) => page.$$eval(`#graph .node.${kind} text.label`, (ts) => ts.map((t) => t.textContent));

test('graph viewer: x*x*x shows its forward muls, the mul backward steps and dout flowing back', { skip, timeout: 180_000 }, async () => {
  const { page, problems, context } = await suite.open('graph.html');
  await waitReady(page, problems);
  await page.fill('#expr', 'x*x*x');
  await page.fill('#x0', '2');
  await page.waitForFunction(() => document.body.dataset.ready === '1' && document.getElementById('code').textContent.includes('f(x) = x*x*x'));

  assert.deepEqual(await labels(page, 'fwd'), ['mul', 'mul']);
  assert.deepEqual(await labels(page, 'bwd'), ['bprop mul', 'bprop mul']);
  assert.deepEqual(await labels(page, 'acc'), ['add', 'add']);
  assert.deepEqual(await labels(page, 'grad'), ['d/dx']);
  const steps = await page.$$eval('#steps li', (lis) => lis.map((li) => li.textContent));
  // (x*x)*x runs two muls; x*x one, as both of its inputs are the same tensor (dout * x serves both).
  assert.deepEqual(steps, ['bprop mul: mul, mul', 'bprop mul: mul (+ add, add)']);
  // Edges are drawn from the dagre layout: every path has points.
  const paths = await page.$$eval('#graph .edge path', (ps) => ps.map((p) => p.getAttribute('d')));
  assert.ok(paths.length >= 8 && paths.every((d) => /^M[\d.-]+,[\d.-]+( L[\d.-]+,[\d.-]+)+$/.test(d)), paths.join('\n'));

  // Step through: the current backward node and its dout edge are highlighted.
  assert.equal(await page.$eval('#graph', (g) => g.dataset.current), '-1');
  await page.click('#next');
  assert.equal(await page.$eval('#graph', (g) => g.dataset.current), '0');
  assert.equal(await page.$$eval('#graph .node.bwd.current', (n) => n.length), 1);
  assert.equal(await page.$$eval('#graph .edge.current', (n) => n.length), 1);
  assert.match(await page.$eval('#step-info', (e) => e.textContent), /dout = 1\b/);
  await page.click('#next');
  assert.match(await page.$eval('#step-info', (e) => e.textContent), /dout = 2\b[\s\S]*returned:\n {2}grad 0: 4\n {2}grad 1: 4/);
  await screenshot(page, 'graph');
  await page.click('#next');
  assert.match(await page.$eval('#step-info', (e) => e.textContent), /^d\/dx: 12$/);
  assert.equal(await page.$eval('#next', (b) => b.disabled), true);
  await page.click('#prev');
  assert.equal(await page.$eval('#graph', (g) => g.dataset.current), '1');

  // Hover shows the values.
  await page.hover('#graph .node.grad');
  assert.match(await page.$eval('#tooltip', (t) => t.textContent), /gradient of the output with respect to x\nfloat64\(\)\n12/);

  // The small network.
  await page.check('input[name=mode][value=net]');
  await page.waitForFunction(() => document.body.dataset.ready === '1' && document.getElementById('code').textContent.includes('W1'));
  const fwd = await labels(page, 'fwd');
  assert.deepEqual(fwd, ['matmul', 'add', 'tanh', 'matmul', 'add', 'sub', 'square', 'mean']);
  const bwd = await labels(page, 'bwd');
  assert.deepEqual(bwd, ['bprop mean', 'bprop square', 'bprop sub', 'bprop add', 'bprop matmul', 'bprop tanh', 'bprop add', 'bprop matmul']);
  assert.deepEqual((await labels(page, 'grad')).sort(), ['d/dW1', 'd/dW2', 'd/db1', 'd/db2', 'd/dx', 'd/dy']);
  await page.click('#all');
  await screenshot(page, 'graph-network');

  // Bad input.
  await page.fill('#expr', 'x*(x');
  await page.waitForFunction(() => document.body.dataset.ready === '1' && document.getElementById('message').dataset.kind === 'parse-error');
  assert.deepEqual(problems, [], 'no console errors, page errors or failed requests');
  await context.close();
});

test('graph viewer, jitted view: one optimised graph with its fused loops drawn as boxes', { skip, timeout: 180_000 }, async () => {
  const { page, problems, context } = await suite.open('graph.html');
  await waitReady(page, problems);
  await page.fill('#expr', 'sin(x)*x + exp(x)');
  await page.fill('#x0', '0.5');
  await page.waitForFunction(() => document.body.dataset.ready === '1' && document.getElementById('code').textContent.includes('sin(x)*x'));
  await page.check('input[name=view][value=jit]');
  await page.waitForFunction(() => document.body.dataset.ready === '1' && document.getElementById('code').textContent.includes('step.exportGraph'));
  const message = await page.$eval('#message', (m) => m.textContent);
  const m = /(\d+) nodes traced, (\d+) after optimisation, (\d+) fused loops?, (\d+) kernels? per call/.exec(message);
  assert.ok(m, message);
  const [traced, nodes, groups, kernels] = m.slice(1).map(Number);
  assert.ok(nodes <= traced && groups >= 1 && kernels < nodes, message);
  // Each fused group is a box, with the ops inside it; the step buttons are gone (nothing to step through).
  assert.equal(await page.$$eval('#graph .group', (g) => g.length), groups);
  assert.equal(await page.$eval('#graph', (g) => g.dataset.groups), String(groups));
  assert.match(await page.$eval('#graph .group text', (t) => t.textContent), /^fused #0: \d+ ops, one loop$/);
  assert.equal(await page.$eval('#next', (b) => b.hidden), true);
  const fwd = await labels(page, 'fwd');
  assert.ok(fwd.includes('sin') && fwd.includes('cos') && fwd.includes('exp'), fwd.join(', ')); // cos: sin's bprop
  assert.deepEqual(await labels(page, 'input'), ['x']);
  assert.equal((await labels(page, 'grad')).length, 2); // the value and d/dx
  const passes = await page.$$eval('#steps li', (lis) => lis.map((li) => li.textContent));
  assert.ok(passes.some((p) => p.startsWith('fuse-elementwise:')), passes.join('\n'));
  await page.hover('#graph .node.grad');
  assert.match(await page.$eval('#tooltip', (t) => t.textContent), /^node \d+: %\d+ = \w+\(/);
  await screenshot(page, 'graph-jit');
  // Before the passes: more nodes, no fused loops, every node its own kernel.
  const drawnOptimised = await page.$$eval('#graph .node', (n) => n.length);
  await page.check('input[name=view][value=jit-traced]');
  await page.waitForFunction(() => document.body.dataset.ready === '1' && document.getElementById('code').textContent.includes('optimize: false'));
  const before = await page.$eval('#message', (el) => el.textContent);
  const b = /before the passes: (\d+) nodes, (\d+) kernels per call/.exec(before);
  assert.ok(b, before);
  assert.deepEqual([Number(b[1]), Number(b[2])], [traced, traced], before);
  assert.equal(await page.$$eval('#graph .group', (g) => g.length), 0);
  assert.ok((await page.$$eval('#graph .node', (n) => n.length)) > drawnOptimised);
  await page.check('input[name=view][value=jit]');
  await page.waitForFunction(() => document.body.dataset.ready === '1' && !document.getElementById('code').textContent.includes('optimize: false'));
  assert.equal(await page.$$eval('#graph .group', (g) => g.length), groups);
  // The network case in the same view; back to the eager view restores the steps.
  await page.check('input[name=mode][value=net]');
  await page.waitForFunction(() => document.body.dataset.ready === '1' && document.getElementById('code').textContent.includes('W1, b1'));
  assert.deepEqual(await labels(page, 'input'), ['x', 'W1', 'b1', 'W2', 'b2', 'y']);
  assert.ok((await labels(page, 'fwd')).includes('matmul'));
  await page.check('input[name=view][value=eager]');
  await page.waitForFunction(() => document.body.dataset.ready === '1' && !document.getElementById('code').textContent.includes('step.exportGraph'));
  assert.equal(await page.$eval('#next', (b) => b.hidden), false);
  assert.equal(await page.$$eval('#graph .group', (g) => g.length), 0);
  assert.deepEqual(problems, [], 'no console errors, page errors or failed requests');
  await context.close();
});
