// bp.setContext / bp.getContext: MindSpore's execution context. In graph mode the functions grad and valueAndGrad
// return, and Cells, compile themselves with jit on first use: their JavaScript runs once per signature (the
// trace) and every later call replays the graph, with the eager results bit for bit.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { init, ValueError } from '../../web/index.js';

const bp = await init();

const bits = (t) => Buffer.from(t.dataSync().buffer.slice(0));
function sameBits(got, want, what) {
  assert.deepEqual(got.shape, want.shape, `${what}: shape`);
  assert.ok(bits(got).equals(bits(want)), `${what}: ${got.toString()} is not ${want.toString()}`);
}

/** Runs body in graph mode, back to pynative however it ends. */
function inGraphMode(body) {
  bp.setContext({ mode: 'graph' });
  try {
    return body();
  } finally {
    bp.setContext({ mode: 'pynative' });
  }
}

test('the context starts in pynative mode on the CPU, and setContext changes only what it is given', () => {
  assert.deepEqual(bp.getContext(), { mode: 'pynative', device: 'cpu' });
  inGraphMode(() => {
    assert.deepEqual(bp.getContext(), { mode: 'graph', device: 'cpu' });
    bp.setContext({ device: 'cpu' });
    assert.equal(bp.getContext().mode, 'graph');
  });
  assert.deepEqual(bp.getContext(), { mode: 'pynative', device: 'cpu' });
});

test('a bad mode or device is a ValueError naming it, and the context is unchanged', () => {
  assert.throws(() => bp.setContext({ mode: 'GRAPH_MODE' }), (e) => e instanceof ValueError && /'GRAPH_MODE'/.test(e.message));
  assert.throws(() => bp.setContext({ device: 'tpu:0' }), (e) => e instanceof ValueError && /'tpu:0'/.test(e.message));
  assert.throws(() => bp.setContext({ mode: 1 }), (e) => e instanceof ValueError && /mode must be a string/.test(e.message));
  assert.deepEqual(bp.getContext(), { mode: 'pynative', device: 'cpu' });
});

test('in graph mode a grad function traces once per signature and replays bit for bit', () => {
  let runs = 0;
  const f = (x, w) => {
    runs++;
    return bp.ops.sum(bp.ops.tanh(x.mul(w)).mul(x));
  };
  const x = bp.tensor([0.5, -1, 2], { shape: [3] });
  const w = bp.tensor([1.5, 0.25, -0.75], { shape: [3] });
  const eagerGrad = bp.grad(f, { gradPosition: [0, 1] })(x, w);
  const eagerValue = bp.valueAndGrad(f)(x, w);
  runs = 0;
  inGraphMode(() => {
    const g = bp.grad(f, { gradPosition: [0, 1] });
    for (let i = 0; i < 3; i++) {
      const [gx, gw] = g(x, w);
      sameBits(gx, eagerGrad[0], `call ${i}: dx`);
      sameBits(gw, eagerGrad[1], `call ${i}: dw`);
    }
    assert.equal(runs, 1, 'the function ran for the trace only');
    g(bp.tensor([1, 2], { shape: [2] }), bp.tensor([3, 4], { shape: [2] }));  // a new signature: traced again
    assert.equal(runs, 2);
    const [value, dx] = bp.valueAndGrad(f)(x, w);
    sameBits(value, eagerValue[0], 'value');
    sameBits(dx, eagerValue[1], 'valueAndGrad dx');
  });
  // Back in pynative mode: the same function runs op by op again.
  runs = 0;
  const g = bp.grad(f);
  g(x, w);
  g(x, w);
  assert.equal(runs, 2);
});

test('in graph mode, weights, hasAux and sensParam keep their meaning', () => {
  const w = new bp.Parameter(bp.tensor([0.5, -2], { shape: [2] }), 'w');
  const f = (x) => [bp.ops.sum(x.mul(w).mul(x)), x.mul(2)];
  const x = bp.tensor([3, 4], { shape: [2] });
  const sens = bp.tensor(0.5);
  const opts = { gradPosition: 0, weights: [w], hasAux: true };
  const eager = bp.grad(f, opts)(x);
  const eagerSens = bp.grad((a) => bp.ops.sum(a.mul(w)), { sensParam: true })(x, sens);
  inGraphMode(() => {
    for (let i = 0; i < 2; i++) {
      const [[dx, [dw]], aux] = bp.grad(f, opts)(x);
      sameBits(dx, eager[0][0], 'dx');
      sameBits(dw, eager[0][1][0], 'dw');
      sameBits(aux, eager[1], 'aux');
    }
    sameBits(bp.grad((a) => bp.ops.sum(a.mul(w)), { sensParam: true })(x, sens), eagerSens, 'with sens');
  });
});

test('in graph mode a grad function inside an open grad level runs eagerly, so the level differentiates it', () => {
  const f = (x) => bp.ops.sum(x.mul(x).mul(x));
  const x = bp.tensor([1, -2, 0.5], { shape: [3] });
  const eager = bp.grad((a) => bp.ops.sum(bp.grad(f)(a)))(x);  // d/dx sum(3x^2) = 6x
  inGraphMode(() => {
    const second = bp.grad((a) => bp.ops.sum(bp.grad(f)(a)));
    sameBits(second(x), eager, 'second order');
    sameBits(second(x), eager, 'second order, replayed');
  });
  assert.deepEqual(Array.from(eager.dataSync()), [6, -12, 3]);
});

test('in graph mode a Cell called with tensors compiles itself; other calls run eagerly', () => {
  let constructs = 0;
  class Scale extends bp.Cell {
    constructor() {
      super();
      this.w = new bp.Parameter(bp.tensor([2, 3], { shape: [2] }), 'w');
    }
    construct(x, bias = 0) {
      constructs++;
      return x.mul(this.w).add(bias);
    }
  }
  const net = new Scale();
  const x = bp.tensor([1, 1], { shape: [2] });
  const eager = net(x);
  constructs = 0;
  inGraphMode(() => {
    sameBits(net(x), eager, 'first call');
    sameBits(net(x), eager, 'replay');
    assert.equal(constructs, 1);
    // A Parameter assigned after the trace is read live by the replay.
    net.w.assign(bp.tensor([4, 5], { shape: [2] }));
    assert.deepEqual(Array.from(net(x).dataSync()), [4, 5]);
    assert.equal(constructs, 1);
    net(x, 1);  // (a number argument: eager)
    assert.equal(constructs, 2);
  });
  assert.deepEqual(net.parametersAndNames().map(([n]) => n), ['w']);  // the graph is not a sub-cell
});
