// bp.jit: a JavaScript function traced once per signature into a graph (forward and the backward operators of
// any grad inside it) and replayed. The replay runs the same kernels on the same inputs in the same order as
// eager, so every result here is compared bit for bit, not within a tolerance.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { init, ValueError } from '../../web/index.js';
import { liveTensors } from './memory.mjs';

const bp = await init();

/** The bytes of a tensor's elements. */
const bits = (t) => {
  const d = t.dataSync();
  return Buffer.from(d.buffer, d.byteOffset, d.byteLength);
};
/** Same shape, dtype and bytes (NaNs and signed zeros included). */
function sameBits(got, want, what = 'tensor') {
  assert.deepEqual(got.shape, want.shape, `${what}: shape`);
  assert.equal(got.dtype, want.dtype, `${what}: dtype`);
  assert.ok(bits(got).equals(bits(want)), `${what}: ${got.toString()} is not bit-identical to ${want.toString()}`);
}
/** Nested arrays of tensors (or nulls), compared leaf by leaf. */
function sameTree(got, want, what = 'result') {
  if (Array.isArray(want)) {
    assert.ok(Array.isArray(got), `${what}: expected an array`);
    assert.equal(got.length, want.length, `${what}: length`);
    want.forEach((w, i) => sameTree(got[i], w, `${what}[${i}]`));
  } else if (want === null) {
    assert.equal(got, null, what);
  } else {
    sameBits(got, want, what);
  }
}

const tanhLoss = (x) => bp.ops.sum(bp.ops.tanh(x).mul(x));

test('traces once per signature, replays after, and traces again for a new shape or dtype', () => {
  bp.tidy(() => {
    const f = bp.jit((x, y) => x.mul(y).add(x).sum({ axis: 0 }));
    const a = bp.randn([3, 4], { seed: 1 });
    const b = bp.randn([3, 4], { seed: 2 });
    f(a, b);
    assert.deepEqual([f.stats().traces, f.stats().replays, f.stats().eagerCalls], [1, 0, 0]);
    assert.ok(f.stats().nodes >= 1, `nodes ${f.stats().nodes}`);
    for (let i = 0; i < 5; ++i) f(a, b);
    assert.deepEqual([f.stats().traces, f.stats().replays], [1, 5]);
    // other values, same signature: a replay, with the new values
    const c = bp.randn([3, 4], { seed: 3 });
    sameBits(f(c, b), c.mul(b).add(c).sum({ axis: 0 }));
    assert.deepEqual([f.stats().traces, f.stats().replays], [1, 6]);
    // a new shape traces again; the first signature still replays
    const r = f(bp.ones([5, 2]), bp.ones([5, 2]));
    assert.deepEqual(r.toArray(), [10, 10]);
    assert.equal(f.stats().traces, 2);
    f(a, b);
    assert.deepEqual([f.stats().traces, f.stats().replays], [2, 7]);
    // a new dtype traces again
    assert.equal(f(a.cast('float64'), b.cast('float64')).dtype, 'float64');
    assert.equal(f.stats().traces, 3);
    f.dispose();
  });
});

test('stats() has the fields of the core JitStats', () => {
  const f = bp.jit(tanhLoss);
  bp.tidy(() => {
    f(bp.ones([4]));
  });
  const s = f.stats();
  for (const key of ['traces', 'replays', 'eagerCalls', 'gradCalls', 'nodes', 'nodesTraced', 'fusedGroups', 'kernels', 'plannedBytes', 'eagerBytes', 'inPlace', 'donatedUpdates']) {
    assert.equal(typeof s[key], 'number', key);
    assert.ok(Number.isInteger(s[key]) && s[key] >= 0, `${key} = ${s[key]}`);
  }
  assert.ok(s.nodesTraced >= s.nodes);
  assert.ok(s.compileSeconds >= 0);
  assert.ok(Array.isArray(s.passes));
  for (const p of s.passes) assert.deepEqual(Object.keys(p).sort(), ['after', 'before', 'pass']);
  f.dispose();
});

test('exportGraph() gives the same graph as data: values, nodes with their fused group, groups, outputs', () => {
  bp.tidy(() => {
    const step = bp.jit(bp.valueAndGrad((x) => x.mul(x).add(1).tanh().mul(x.sigmoid()).sum()));
    const x = bp.tensor([0.5, -1, 2]);
    const g = step.exportGraph(x);
    assert.equal(g.format, 'bprop-jit-graph/1');
    assert.equal(step.stats().traces, 1);
    assert.equal(g.nodes.length, step.stats().nodes);
    assert.equal(g.groups.length, step.stats().fusedGroups);
    assert.ok(g.groups.length >= 1);
    assert.deepEqual(g.values[0], { id: 0, shape: [3], dtype: 'float32', kind: 'argument', argument: 0 });
    const ids = new Set(g.values.map((v) => v.id));
    for (const n of g.nodes) {
      for (const i of n.inputs) if (i !== null) assert.ok(ids.has(i), `input %${i} of ${n.op} is a value`);
      // the JavaScript API marks each node with its caller's location: this file
      assert.match(n.where, /^jit\.test\.mjs:\d+:\d+$/);
    }
    for (const grp of g.groups) {
      for (const k of grp.nodes) assert.equal(g.nodes[k].group, grp.id);
    }
    assert.equal(g.outputs.length, 2);
    const one = g.values.find((v) => v.kind === 'constant' && v.values[0] === 1);
    assert.ok(one, 'the constant 1 of add(1) is there with its value');
    // the text of lower() names the same fused groups
    assert.equal((step.lower(x).match(/fused #\d+ \{/g) ?? []).length, g.groups.length);
    step.dispose();
  });
});

test('lower() prints the graph for the arguments, tracing it when new', () => {
  bp.tidy(() => {
    const step = bp.jit(bp.valueAndGrad(tanhLoss));
    const x = bp.tensor([0.5, -1, 2]);
    const text = step.lower(x);
    assert.equal(step.stats().traces, 1);
    assert.match(text, /^%0 = argument 0\n/);
    assert.match(text, /tanh\(%0\) : \(3,\) float32/);
    assert.match(text, /sum\(/);
    assert.match(text, /\nreturn %\d+, %\d+\n?$/);
    // the call after lower() replays the graph lower() traced
    step(x);
    assert.deepEqual([step.stats().traces, step.stats().replays], [1, 1]);
    // another shape: another graph
    assert.match(step.lower(bp.ones([2, 2])), /: \(2, 2\) float32/);
    assert.equal(step.stats().traces, 2);
    step.dispose();
  });
});

test('valueAndGrad of sum(tanh(x) * x): jitted equals eager bit for bit, float32 and float64', () => {
  bp.tidy(() => {
    const eager = bp.valueAndGrad(tanhLoss);
    const jitted = bp.jit(bp.valueAndGrad(tanhLoss));
    for (const dtype of ['float32', 'float64']) {
      for (let seed = 0; seed < 4; ++seed) {
        const x = bp.randn([7, 5], { seed, dtype });
        sameTree(jitted(x), eager(x), `${dtype} seed ${seed}`);
      }
    }
    assert.deepEqual([jitted.stats().traces, jitted.stats().replays], [2, 6]);
    jitted.dispose();
  });
});

test('fused loops with attributes and column broadcasts, and values written over dying inputs, keep the eager bits', () => {
  bp.tidy(() => {
    // leakyRelu / elu / gelu / clamp take their attributes into the loop; (n, 1) and (c, 1, 1) repeat along the
    // trailing dimensions; the log_softmax backward subtracts a column
    const f = (x, col) => {
      const y = bp.ops.leakyRelu(x.mul(3), { alpha: 0.2 }).add(bp.ops.elu(x, { alpha: 0.7 }))
        .add(bp.ops.gelu(x, { approximate: 'tanh' })).add(x.clamp({ min: -0.5 })).add(x.clamp({ max: 0.25 }));
      return bp.ops.exp(y.sub(col)).mul(col);
    };
    for (const dtype of ['float32', 'float64']) {
      for (const [shape, colShape] of [[[6, 5], [6, 1]], [[4, 3, 17, 19], [3, 1, 1]]]) {
        const x = bp.randn(shape, { seed: 3, dtype });
        const col = bp.randn(colShape, { seed: 4, dtype });
        const jitted = bp.jit(f);
        sameBits(jitted(x, col), f(x, col), `${dtype} ${shape}`);
        assert.equal(jitted.stats().kernels, 1, jitted.lower(x, col));
        jitted.dispose();
      }
    }
    const loss = (x) => bp.ops.sum(bp.ops.logSoftmax(x.mul(x)).mul(x));
    const step = bp.jit(bp.valueAndGrad(loss));
    const x = bp.randn([64, 10], { seed: 5 });
    sameTree(step(x), bp.valueAndGrad(loss)(x));
    step.dispose();
    // tanh reads the matmul's result for the last time: its loop writes over it
    const layer = (a, w) => bp.ops.sum(bp.ops.tanh(a.matmul(w)).mul(2));
    const layerStep = bp.jit(bp.valueAndGrad(layer, { gradPosition: [0, 1] }));
    const w = bp.randn([10, 16], { seed: 6 });
    sameTree(layerStep(x, w), bp.valueAndGrad(layer, { gradPosition: [0, 1] })(x, w));
    assert.ok(layerStep.stats().inPlace >= 1, layerStep.lower(x, w));
    layerStep.dispose();
  });
});

test('jit(grad(f)), second order jit(grad(grad(f))) and a few more functions equal eager bit for bit', () => {
  bp.tidy(() => {
    const x = bp.linspace(-2, 2, 9);
    const y = bp.randn([9], { seed: 4 });
    const f = (a) => a.sin().mul(a.exp()).sum();
    const g = (a, b) => bp.ops.softplus(a.mul(b)).div(b.mul(b).add(1)).mean();
    const cases = [
      [bp.grad(f), [x]],
      [bp.grad(bp.grad(f)), [x]],
      [bp.grad(g, { gradPosition: [0, 1] }), [x, y]],
      [bp.valueAndGrad(g, { gradPosition: 1 }), [x, y]],
      [(a, b) => [a.matmul(b.reshape([9, 1])), bp.ops.logSoftmax(a.reshape([3, 3]), { axis: 1 })], [x.reshape([1, 9]), y]],
    ];
    for (const [fn, args] of cases) {
      const jitted = bp.jit(fn);
      const want = fn(...args);
      sameTree(jitted(...args), want);
      sameTree(jitted(...args), want);
      assert.deepEqual([jitted.stats().traces, jitted.stats().replays], [1, 1]);
      jitted.dispose();
    }
  });
});

test('grad(jit(f)): under an open grad level the jitted call is differentiated exactly', () => {
  bp.tidy(() => {
    const f = (a) => a.mul(a).mul(a).sum();
    const jf = bp.jit(f);
    const x = bp.tensor([1, 2, 3]);
    sameBits(bp.grad(jf)(x), bp.grad(f)(x));
    sameBits(bp.grad(bp.grad((a) => jf(a)))(bp.tensor(2)), bp.tensor(12));
    // each call under a grad level is counted: run as a graph with a jitted backward, or eagerly
    const s = jf.stats();
    assert.equal(s.gradCalls + s.eagerCalls, 2, JSON.stringify(s));
    // a function returning an array runs eagerly under the level, with the same gradients
    const pair = (a) => [a.mul(a).sum(), a.sum()];
    const jpair = bp.jit(pair);
    sameTree(bp.grad((a) => jpair(a)[0])(x), bp.grad((a) => pair(a)[0])(x));
    assert.equal(jpair.stats().gradCalls + jpair.stats().eagerCalls, 1);
    // outside a grad level the same function is traced and replayed
    sameBits(jf(x), f(x));
    assert.equal(jf.stats().gradCalls + jf.stats().eagerCalls, 2);
    jf.dispose();
    jpair.dispose();
  });
});

test('a jitted function called while tracing another is part of that trace', () => {
  bp.tidy(() => {
    const inner = bp.jit((a) => a.exp());
    const outer = bp.jit((a) => inner(a).add(1).sum());
    const x = bp.tensor([0, 1]);
    sameBits(outer(x), x.exp().add(1).sum());
    assert.equal(inner.stats().traces, 0);
    assert.equal(outer.stats().traces, 1);
    inner.dispose();
    outer.dispose();
  });
});

/** A 2-layer MLP's Parameters, the same numbers for every call with the same seed. */
function mlpParams(seed, { inputs = 4, hidden = 16, classes = 3 } = {}) {
  return [
    new bp.Parameter(bp.randn([inputs, hidden], { seed }).mul(0.5), 'w1'),
    new bp.Parameter(bp.zeros([hidden]), 'b1'),
    new bp.Parameter(bp.randn([hidden, classes], { seed: seed + 1 }).mul(0.5), 'w2'),
    new bp.Parameter(bp.zeros([classes]), 'b2'),
  ];
}
const mlpLoss = ([w1, b1, w2, b2]) => (x, y) =>
  bp.ops.crossEntropy(bp.ops.relu(x.matmul(w1).add(b1)).matmul(w2).add(b2), y);

test('a 2-layer MLP trained 20 steps with Adam: jitted steps give bit-identical losses and Parameters', () => {
  const x = bp.randn([32, 4], { seed: 10 });
  const y = bp.tensor(Array.from({ length: 32 }, (_, i) => (i * 7) % 3), { dtype: 'int32' });
  const run = (useJit) => {
    const params = mlpParams(20);
    const opt = new bp.optim.Adam(params, { learningRate: 0.05 });
    let step = bp.valueAndGrad(mlpLoss(params), { gradPosition: null, weights: params });
    if (useJit) step = bp.jit(step);
    const losses = [];
    for (let i = 0; i < 20; ++i) {
      bp.tidy(() => {
        const [loss, grads] = step(x, y);
        opt.step(grads);
        losses.push(bits(loss));
      });
    }
    return { params, losses, step };
  };
  const eager = run(false);
  const jitted = run(true);
  assert.deepEqual([jitted.step.stats().traces, jitted.step.stats().replays], [1, 19]);
  eager.losses.forEach((l, i) => assert.ok(jitted.losses[i].equals(l), `loss of step ${i}`));
  // the optimizer's in-place updates were seen by every replay: the loss went down, as eagerly
  const first = new Float32Array(new Uint8Array(jitted.losses[0]).buffer)[0];
  const last = new Float32Array(new Uint8Array(jitted.losses[19]).buffer)[0];
  assert.ok(last < first * 0.8, `loss ${first} -> ${last}`);
  eager.params.forEach((p, i) => sameBits(jitted.params[i], p, p.name));
  jitted.step.dispose();
});

test('a whole training step in one graph: Parameter.assign inside jit is done at every replay', () => {
  const x = bp.randn([8, 4], { seed: 2 });
  const y = bp.tensor([0, 1, 2, 0, 1, 2, 0, 1], { dtype: 'int32' });
  const run = (useJit) => {
    const params = mlpParams(40, { inputs: 4, hidden: 6, classes: 3 });
    const vg = bp.valueAndGrad(mlpLoss(params), { gradPosition: null, weights: params });
    let step = (a, b) => {
      const [loss, grads] = vg(a, b);
      params.forEach((p, i) => p.assign(p.sub(grads[i].mul(0.1))));
      return loss;
    };
    if (useJit) step = bp.jit(step);
    const losses = [];
    for (let i = 0; i < 20; ++i) {
      bp.tidy(() => {
        losses.push(bits(step(x, y)));
      });
    }
    return { params, losses, step };
  };
  const eager = run(false);
  const jitted = run(true);
  assert.deepEqual([jitted.step.stats().traces, jitted.step.stats().replays], [1, 19]);
  // every new weight is computed straight into its Parameter (buffer donation), still bit for bit as eager
  assert.equal(jitted.step.stats().donatedUpdates, jitted.params.length);
  eager.losses.forEach((l, i) => assert.ok(jitted.losses[i].equals(l), `loss of step ${i}`));
  assert.ok(!jitted.losses[19].equals(jitted.losses[0]), 'the updates changed the loss');
  eager.params.forEach((p, i) => sameBits(jitted.params[i], p, p.name));
  jitted.step.dispose();
});

test('bp.nn cells inside jit: a Dense network trained with SGD matches eager bit for bit', () => {
  const x = bp.randn([16, 3], { seed: 5 });
  const y = bp.tensor(Array.from({ length: 16 }, (_, i) => i % 2), { dtype: 'int32' });
  const run = (useJit) => {
    bp.nn.setSeed(7);
    const net = new bp.nn.SequentialCell([new bp.nn.Dense(3, 8, { activation: 'tanh' }), new bp.nn.Dense(8, 2)]);
    const lossFn = new bp.nn.CrossEntropyLoss();
    const opt = new bp.optim.SGD(net.trainableParams(), 0.1, { momentum: 0.9 });
    let step = bp.valueAndGrad((a, b) => lossFn(net(a), b), { gradPosition: null, weights: opt.parameters });
    if (useJit) step = bp.jit(step);
    for (let i = 0; i < 10; ++i) bp.tidy(() => opt.step(step(x, y)[1]));
    return net;
  };
  const eager = run(false).trainableParams();
  const net = run(true);
  net.trainableParams().forEach((p, i) => sameBits(p, eager[i], p.name));
  // a cell is a function: jit takes it as it is
  const forward = bp.jit(net);
  bp.tidy(() => sameBits(forward(x), net(x), 'bp.jit(cell)'));
  forward.dispose();
});

test('reading a value while tracing is a ValueError that names jit and tracing', () => {
  const x = bp.tensor([1, 2]);
  const reads = {
    'item()': (a) => a.sum().item(),
    'data()': (a) => a.dataSync(),
    'toArray()': (a) => a.toArray(),
    'a branch on a value': (a) => (a.sum().item() > 0 ? a : a.neg()),
  };
  for (const [what, read] of Object.entries(reads)) {
    const f = bp.jit((a) => {
      read(a);
      return a;
    });
    assert.throws(() => f(x), (e) => {
      assert.ok(e instanceof ValueError && e instanceof bp.ValueError, `${what}: ${e}`);
      assert.match(e.message, /jit/, what);
      assert.match(e.message, /not known while tracing/, what);
      return true;
    });
    assert.equal(f.stats().traces, 0, 'a failed trace is not cached');
    f.dispose();
  }
  // printing a traced tensor shows its shape and dtype
  let shown;
  const p = bp.jit((a) => {
    shown = a.toString();
    return a;
  });
  bp.tidy(() => {
    p(x);
  });
  assert.equal(shown, 'Tensor(shape=(2,), dtype=float32, traced)');
  p.dispose();
});

test('errors: argument count, undefined arguments, a throwing function, refused side effects, options', () => {
  const x = bp.ones([2]);
  const two = bp.jit((a, b) => a.add(b));
  assert.throws(() => two(x), (e) => e instanceof ValueError && /takes 2 arguments, the call got 1/.test(e.message));
  assert.throws(() => two.lower(), (e) => e instanceof ValueError && /takes 2 arguments, lower\(\) got 0/.test(e.message));
  // more than it declares would be ignored by it: an error too, unless it can take them
  assert.throws(() => two(x, x, x), (e) => e instanceof ValueError && /takes 2 arguments, the call got 3/.test(e.message));
  const withDefault = bp.jit((a, b = null) => (b ? a.add(b) : a));
  assert.deepEqual(withDefault(x, x).shape, x.shape);
  const rest = bp.jit((...xs) => xs[xs.length - 1]);
  assert.deepEqual(rest(x, x, x).shape, x.shape);
  withDefault.dispose();
  rest.dispose();
  assert.throws(() => two(x, null), (e) => e instanceof ValueError && /argument 1 is an undefined tensor/.test(e.message));
  assert.throws(() => two(x, {}), ValueError);
  // a function given to grad declares no parameters: a missing tensor is the op's error
  const vg = bp.jit(bp.valueAndGrad((a, b) => a.mul(b).sum()));
  assert.throws(() => vg(x), (e) => e instanceof ValueError && /mul/.test(e.message));
  // the function's own error comes out as it was thrown; the next call traces again and works
  const custom = new Error('custom failure');
  let fail = true;
  const f = bp.jit((a) => {
    if (fail) throw custom;
    return a.mul(3);
  });
  assert.throws(() => f(x), (e) => e === custom);
  fail = false;
  assert.deepEqual(bp.tidy(() => f(x).toArray()), [3, 3]);
  assert.equal(f.stats().traces, 1);
  // side effects the graph could not repeat
  const w = new bp.Parameter(bp.ones([2]), 'w');
  const opt = new bp.optim.SGD([w], 0.1);
  const cases = [
    [() => bp.randn([2]), /randn/],
    [(a) => bp.saveCheckpoint({ a }), /saveCheckpoint inside a traced function/],
  ];
  for (const [body, message] of cases) {
    const g = bp.jit((a) => {
      body(a);
      return a;
    });
    assert.throws(() => g(x), (e) => e instanceof ValueError && message.test(e.message), String(message));
    g.dispose();
  }
  assert.deepEqual(w.toArray(), [1, 1], 'the refused calls changed nothing');
  opt.dispose?.();
  w.dispose();
  assert.throws(() => bp.jit('not a function'), ValueError);
  assert.throws(() => bp.jit((a) => a, { fusion: true }), /unknown option 'fusion'/);
  assert.throws(() => bp.jit((a) => a, { maxTraces: -1 }), ValueError);
  assert.throws(() => bp.jit((a) => a, { optimize: 'yes' }), ValueError);
  // still usable after every error, with no grad level left open
  assert.equal(bp.tidy(() => bp.grad((a) => a.mul(a))(bp.tensor(3)).item()), 6);
  for (const j of [two, vg, f]) j.dispose();
});

test('options: staticArgnums, maxTraces, optimize and fuse off', () => {
  bp.tidy(() => {
    const scale = bp.jit((a, k) => a.mul(k), { staticArgnums: [1] });
    const x = bp.ones([2]);
    assert.deepEqual(scale(x, 3).toArray(), [3, 3]);
    assert.deepEqual(scale(x, 4).toArray(), [4, 4]);
    assert.deepEqual(scale(x, 3).toArray(), [3, 3]);
    assert.deepEqual([scale.stats().traces, scale.stats().replays], [2, 1]);
    // a static argument is a constant of the graph, not an argument of it, and its value may be read
    assert.doesNotMatch(scale.lower(x, 3), /argument 1/);
    const power = bp.jit((a, k) => (k.item() === 0 ? bp.onesLike(a) : a.pow(k.item())), { staticArgnums: 1 });
    assert.deepEqual(power(bp.tensor([2, 3]), 0).toArray(), [1, 1]);
    assert.deepEqual(power(bp.tensor([2, 3]), 2).toArray(), [4, 9]);
    power.dispose();
    const once = bp.jit((a) => a.sum(), { maxTraces: 1 });
    once(x);
    assert.throws(() => once(bp.ones([3])), (e) => e instanceof ValueError && /max_traces/.test(e.message));
    const plain = bp.jit(bp.valueAndGrad(tanhLoss), { optimize: false, fuse: false });
    const fused = bp.jit(bp.valueAndGrad(tanhLoss));
    const y = bp.randn([64], { seed: 3 });
    sameTree(plain(y), fused(y));
    assert.equal(plain.stats().nodes, plain.stats().nodesTraced);
    assert.equal(plain.stats().fusedGroups, 0);
    for (const j of [scale, once, plain, fused]) j.dispose();
  });
});

test('registered primitives inside jit: the replay calls the JavaScript forward, gradients through its bprop', () => {
  let forwards = 0;
  bp.registerPrimitive({
    name: 'jit_test_cube',
    forward: (a) => {
      forwards += 1;
      return a.map((v) => v * v * v);
    },
    bprop: (a, out, dout) => [a.mul(a).mul(3).mul(dout)],
  });
  bp.tidy(() => {
    const x = bp.tensor([1, 2, -3]);
    const f = (a) => bp.ops.jit_test_cube(a).sum();
    const jf = bp.jit(f);
    sameBits(jf(x), f(x));
    forwards = 0;
    for (let i = 0; i < 3; ++i) assert.equal(jf(x).item(), 1 + 8 - 27);
    assert.equal(forwards, 3, 'one JavaScript forward per replay');
    assert.equal(jf.stats().replays, 3);
    const jg = bp.jit(bp.valueAndGrad(f));
    sameTree(jg(x), bp.valueAndGrad(f)(x));
    sameTree(jg(x), [bp.tensor(-18), bp.tensor([3, 12, 27])]);
    jf.dispose();
    jg.dispose();
  });
});

test('results are owned like op results: tidy frees them; numbers and arrays are converted as arguments', () => {
  const f = bp.jit((a, b) => [a.add(b), a.mul(b)]);
  const base = liveTensors(bp);
  bp.tidy(() => {
    const [s, p] = f(bp.tensor([1, 2]), 3);
    assert.deepEqual(s.toArray(), [4, 5]);
    assert.deepEqual(p.toArray(), [3, 6]);
    assert.deepEqual(f([1, 2], [3, 4])[1].toArray(), [3, 8]);
  });
  assert.deepEqual(liveTensors(bp), base);
  const kept = bp.tidy(() => f(bp.ones([2]), bp.ones([2]))[0]);
  assert.equal(bp.memory().tensors, base.tensors + 1);
  kept.dispose();
  assert.deepEqual(liveTensors(bp), base);
  f.dispose();
});

test('dispose() frees the graphs and their constants; later calls are a ValueError', () => {
  const base = liveTensors(bp);
  const c = bp.randn([100], { seed: 1 });
  const f = bp.jit((a) => a.add(c));
  bp.tidy(() => {
    f(bp.ones([100]));
  });
  c.dispose();
  // the graph keeps its constant alive
  assert.equal(bp.memory().tensors, base.tensors + 1);
  assert.equal(f.isDisposed, false);
  f.dispose();
  f.dispose();
  assert.equal(f.isDisposed, true);
  assert.deepEqual(liveTensors(bp), base);
  const x = bp.ones([100]);
  for (const use of [() => f(x), () => f.lower(x), () => f.stats()]) {
    assert.throws(use, (e) => e instanceof ValueError && /disposed/.test(e.message));
  }
  x.dispose();
  assert.deepEqual(liveTensors(bp), base);
  const u = bp.jit((a) => a);
  u[Symbol.dispose]();
  assert.equal(u.isDisposed, true);
});

test('memory: 10,000 jitted training steps keep bp.memory() and the WebAssembly heap flat', () => {
  const params = mlpParams(30, { inputs: 4, hidden: 8, classes: 2 });
  const x = bp.randn([8, 4], { seed: 31 });
  const y = bp.tensor([0, 1, 1, 0, 1, 0, 0, 1], { dtype: 'int32' });
  const opt = new bp.optim.SGD(params, 0.05);
  const step = bp.jit(bp.valueAndGrad(mlpLoss(params), { gradPosition: null, weights: params }));
  let before;
  let heap;
  let last;
  for (let i = 0; i < 10000; ++i) {
    bp.tidy(() => {
      const [loss, grads] = step(x, y);
      opt.step(grads);
      if (i % 1000 === 999) last = loss.item();
    });
    if (i === 10) {
      before = liveTensors(bp);
      heap = bp.memory();
    }
  }
  assert.deepEqual(liveTensors(bp), before);
  const now = bp.memory();
  assert.equal(now.heapBytes, heap.heapBytes, 'the WebAssembly heap grew');
  assert.equal(now.heapUsed, heap.heapUsed, 'bytes allocated in the heap were left behind');
  assert.deepEqual([step.stats().traces, step.stats().replays], [1, 9999]);
  assert.ok(last < 0.1, `loss ${last}`);
  step.dispose();
});

test('a jitted function that is dropped without dispose() is freed by the garbage collector', () => {
  const entry = fileURLToPath(new URL('../../web/index.js', import.meta.url));
  const child = `
import { init } from ${JSON.stringify(entry)};
const bp = await init();
const collect = async () => {
  for (let i = 0; i < 20; i++) {
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 10));
  }
};
const x = bp.ones([50]);
await collect();
const before = { ...bp.memory(), jitted: bp._mod.jitLive() };
(() => {
  for (let i = 0; i < 50; i++) {
    const c = bp.full([50], i + 2);
    const f = bp.jit((a) => a.mul(c).sum());
    bp.tidy(() => {
      f(x);
    });
    c.dispose();
  }
})();
const made = { ...bp.memory(), jitted: bp._mod.jitLive() };
await collect();
const collected = { ...bp.memory(), jitted: bp._mod.jitLive() };
console.log(JSON.stringify({ before, made, collected }));
`;
  const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', child], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const m = JSON.parse(r.stdout.trim().split('\n').pop());
  assert.equal(m.made.jitted, m.before.jitted + 50);
  // each graph holds its constant (and whatever buffers its replay keeps)
  assert.ok(m.made.tensors >= m.before.tensors + 50, `tensors: ${m.before.tensors} -> ${m.made.tensors}`);
  assert.ok(m.collected.jitted <= m.before.jitted + 2, `jitted functions left: ${m.collected.jitted}`);
  assert.ok(m.collected.tensors <= m.before.tensors + 2, `tensors left: ${m.collected.tensors}`);
});

test('a whole training step, optimizer.step inside, is one jitted call with the eager bits', () => {
  const x = bp.randn([32, 4], { seed: 12 });
  const y = bp.tensor(Array.from({ length: 32 }, (_, i) => (i * 5) % 3), { dtype: 'int32' });
  const run = (useJit) => {
    const params = mlpParams(21);
    const opt = new bp.optim.Adam(params, { learningRate: 0.05 });
    const vg = bp.valueAndGrad(mlpLoss(params), { gradPosition: null, weights: params });
    let step = (a, b) => {
      const [loss, grads] = vg(a, b);
      opt.step(grads);
      return loss;
    };
    if (useJit) step = bp.jit(step);
    const losses = [];
    for (let i = 0; i < 20; ++i) bp.tidy(() => losses.push(bits(step(x, y))));
    return { params, losses, step, opt };
  };
  const eager = run(false);
  const jitted = run(true);
  assert.deepEqual([jitted.step.stats().traces, jitted.step.stats().replays], [1, 19]);
  eager.losses.forEach((l, i) => assert.ok(jitted.losses[i].equals(l), `loss of step ${i}`));
  eager.params.forEach((p, i) => assert.deepEqual(jitted.params[i].toArray(), p.toArray(), `parameter ${i}`));
  assert.equal(jitted.opt.stepCount, 20);
  jitted.step.dispose();
  for (const r of [eager, jitted]) for (const p of r.params) p.dispose();
});

test('source locations: each traced op is marked with the line that called it, and errors at replay name it', () => {
  const pick = bp.jit((x, i) => x.exp().gather(i, { axis: 0 }));
  const x = bp.ones([3]);
  const ok = bp.tensor([0, 2], { dtype: 'int32' });
  const ir = pick.lower(x, ok);
  assert.match(ir, /= exp\(%0\) : \(3,\) float32 {2}# jit\.test\.mjs:\d+:\d+/);
  assert.throws(
    () => pick(x, bp.tensor([0, 7], { dtype: 'int32' })),
    (e) => e instanceof ValueError && /index 7/.test(e.message) && /traced at jit\.test\.mjs:\d+:\d+/.test(e.message),
  );
  pick.dispose();
});

test('source locations: through nested layers, past the first frames, and in engines without V8 call sites', () => {
  // ops run deep inside the package's cells: the location is still the user's line that called the model
  const net = new bp.nn.SequentialCell(
    new bp.nn.SequentialCell(new bp.nn.SequentialCell(new bp.nn.Dense(2, 3), new bp.nn.ReLU())),
    new bp.nn.Dense(3, 1),
  );
  const forward = bp.jit((x) => net.call(x));
  const x = bp.ones([4, 2]);
  const lines = forward.lower(x).split('\n').filter((l) => / = (matmul|relu)\(/.test(l));
  assert.ok(lines.length >= 3, forward.lower(x));
  for (const l of lines) assert.match(l, /# jit\.test\.mjs:\d+:\d+$/, l);
  // a user frame below many of the user's own: found all the same
  const deep = (n, t) => (n === 0 ? t.exp() : deep(n - 1, t));
  const viaDeep = bp.jit((t) => deep(20, t));
  assert.match(viaDeep.lower(x), /= exp\(%0\).*# jit\.test\.mjs:\d+:\d+/);
  // the text of the stack where Error.captureStackTrace is missing (Firefox before 134, Safari)
  const capture = Error.captureStackTrace;
  const plain = bp.jit((t) => t.exp());
  try {
    Error.captureStackTrace = undefined;
    assert.match(plain.lower(x), /= exp\(%0\).*# jit\.test\.mjs:\d+:\d+/);
  } finally {
    Error.captureStackTrace = capture;
  }
  // the backward of an op is marked with the forward op's line, not with the last line traced
  const vg = bp.jit(bp.valueAndGrad((t) => {
    const s = t.sin();
    return s.exp().sum();
  }));
  const ir = vg.lower(x);
  const at = (op) => ir.split('\n').filter((l) => l.includes(`= ${op}(`)).map((l) => l.split('# ')[1]);
  assert.equal(at('sin').length, 1, ir);
  assert.deepEqual(at('cos'), at('sin'), ir);
  assert.notDeepEqual(at('sin'), at('exp'), ir);
  // a Cell's own bprop (run in JavaScript during the trace): its ops are marked with the lines that wrote them
  const lineOf = (e) => Number(e.stack.split('\n')[1].match(/:(\d+):\d+\)?$/)[1]);
  let negLine = 0;
  class Negated extends bp.Cell {
    construct(t) {
      return t.sin();
    }
    bprop(t, out, dout) {
      negLine = lineOf(new Error()); return [dout.neg()];  // one line: the number and the op
    }
  }
  const cell = new Negated();
  const custom = bp.jit(bp.valueAndGrad((t) => cell(t).exp().sum()));
  const customIr = custom.lower(x);
  const negAt = customIr.split('\n').filter((l) => l.includes('= neg('));
  assert.equal(negAt.length, 1, customIr);
  assert.ok(negLine > 0);
  assert.match(negAt[0], new RegExp(`# jit\\.test\\.mjs:${negLine}:\\d+$`), customIr);
  for (const f of [forward, viaDeep, plain, vg, custom]) f.dispose();
  x.dispose();
});

test('a loss sum or mean joins the fused loop and adds up in the kernels order', () => {
  // small integers between +-2^50 multiples that cancel: the float32 result depends on the order of the adds, so
  // the loop must form the kernel's leaves (halves down to 256 elements) and combine them as the kernel does
  bp.tidy(() => {
    const vg = bp.jit(bp.valueAndGrad((x) => bp.ops.sum(x.mul(2).tanh().mul(x))));
    const double = bp.jit((x) => bp.ops.sum(x.mul(2)));
    const mean = bp.jit((x) => bp.ops.mean(x.mul(2)));
    for (const n of [1, 255, 256, 257, 1025, 4097, 65538]) {
      const xs = new Float32Array(n);
      for (let i = 0; i < n; ++i) {
        const big = 2 ** 50 * (1 + (Math.floor(i / 3) % 7));
        xs[i] = i % 3 === 0 ? i % 11 : i % 3 === 1 ? big : -big;
      }
      const x = bp.tensor(xs, { shape: [n] });
      sameTree(vg(x), bp.valueAndGrad((t) => bp.ops.sum(t.mul(2).tanh().mul(t)))(x), `value and grad, n = ${n}`);
      sameBits(double(x), bp.ops.sum(x.mul(2)), `sum(2x), n = ${n}`);
      assert.equal(double.stats().kernels, 1, double.lower(x));
      sameBits(mean(x), bp.ops.mean(x.mul(2)), `mean(2x), n = ${n}`);
      assert.equal(mean.stats().kernels, 1, mean.lower(x));
    }
  });
});

test('a traced tensor used after its trace through a captured variable says it escaped, on every path', () => {
  let leaked = null;
  let kept = null;
  const f = bp.jit((x) => {
    const y = x.mul(2);
    leaked = y;
    kept = bp.keep(y.add(1));
    return bp.ops.sum(y);
  });
  f(bp.tensor([1, 2], { shape: [2] })).dispose();
  const escaped = (e) => e instanceof ValueError && /escaped the function/.test(e.message);
  assert.throws(() => leaked.mul(3), escaped, 'a method with a number');
  assert.throws(() => leaked.mul(leaked), escaped, 'a method with a tensor');
  assert.throws(() => bp.ops.exp(leaked), escaped, 'an op');
  assert.throws(() => bp.ops.concat([leaked, leaked]), escaped, 'an op taking a list');
  assert.throws(() => leaked.shape, escaped, 'a property');
  assert.throws(() => kept.mul(3), escaped, 'one kept out of the trace');
  kept.dispose();
  f.dispose();
  // A tensor disposed by its owner is still just disposed.
  const t = bp.tensor([1], { shape: [1] });
  t.dispose();
  assert.throws(() => t.mul(2), (e) => e instanceof ValueError && /has been disposed/.test(e.message));
});
