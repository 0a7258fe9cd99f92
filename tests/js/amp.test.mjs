// bp.amp over the WebAssembly build: autocast's lists per level, autoMixedPrecision on a JavaScript cell (half
// compute, float32 weights and gradients), the loss scalers' rule, the gated optimizer step, and the loss-scaled
// training cell eager and jitted (the same bits, an overflow skipped in both).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { init } from '../../web/index.js';

const bp = await init();

const bits = (t) => Buffer.from(t.dataSync().buffer.slice(0));

test('autocast: each level casts its lists, float64 never, and the scope closes on a throw', () => {
  bp.tidy(() => {
    const a = bp.randn([4, 8], { seed: 1 });
    const b = bp.randn([8, 3], { seed: 2 });
    bp.amp.autocast('O1', 'bfloat16', () => {
      assert.deepEqual(bp.amp.state(), { level: 'O1', dtype: 'bfloat16' });
      const y = a.matmul(b);
      assert.equal(y.dtype, 'bfloat16');
      assert.equal(bp.ops.softmax(y).dtype, 'float32');
      assert.equal(a.relu().dtype, 'float32');
      assert.equal(y.relu().dtype, 'bfloat16');
      assert.equal(a.cast('float64').matmul(b.cast('float64')).dtype, 'float64');
    });
    bp.amp.autocast('O2', 'float16', () => {
      assert.equal(a.relu().dtype, 'float16');
      assert.equal(a.add(a).dtype, 'float16');
      assert.equal(a.sum().dtype, 'float32');
      assert.equal(bp.ops.logSoftmax(a).dtype, 'float32');
      // nested: the innermost scope applies
      bp.amp.autocast('O0', 'float16', () => assert.equal(a.matmul(b).dtype, 'float32'));
    });
    assert.equal(a.matmul(b).dtype, 'float32');
    assert.throws(() => bp.amp.autocast('O1', 'bfloat16', () => a.matmul(bp.zeros([5, 2]))), bp.ShapeError);
    assert.deepEqual(bp.amp.state(), { level: 'O0', dtype: 'float16' });
    assert.throws(() => bp.amp.autocast('O4', 'bfloat16', () => 0), /level must be one of O0, O1, O2, O3/);
    assert.throws(() => bp.amp.autocast('O1', 'float64', () => 0), bp.DTypeError);
  });
});

class Mlp extends bp.nn.Cell {
  constructor() {
    super();
    this.fc1 = new bp.nn.Dense(6, 16, { activation: 'relu' });
    this.fc2 = new bp.nn.Dense(16, 3);
  }
  construct(x) {
    return this.fc2(this.fc1(x));
  }
}

test('autoMixedPrecision: half compute, float32 outputs, weights and gradients close to float32 ones', () => {
  bp.nn.setSeed(3);
  const net = new Mlp();
  const x = bp.randn([10, 6], { seed: 4 });
  const y = bp.tensor([0, 1, 2, 0, 1, 2, 0, 1, 2, 0], { dtype: 'int32' });
  const params = net.trainableParams();
  const loss = (a, b) => bp.ops.crossEntropy(net(a), b);
  const vg = bp.valueAndGrad(loss, { gradPosition: null, weights: params });
  bp.tidy(() => {
    const [l32, g32] = vg(x, y);
    assert.equal(bp.amp.autoMixedPrecision(net, 'O2', 'bfloat16'), net);
    const out = net(x);
    assert.equal(out.dtype, 'float32');
    const [l16, g16] = vg(x, y);
    assert.equal(l16.dtype, 'float32');
    assert.ok(Math.abs(l16.item() - l32.item()) < 2e-2 * Math.abs(l32.item()), `${l16.item()} vs ${l32.item()}`);
    g16.forEach((g, i) => {
      assert.equal(g.dtype, 'float32', params[i].name);
      const a = g.dataSync();
      const b = g32[i].dataSync();
      let err = 0;
      let scale = 0;
      for (let k = 0; k < a.length; ++k) {
        err = Math.max(err, Math.abs(a[k] - b[k]));
        scale = Math.max(scale, Math.abs(b[k]));
      }
      // bfloat16 keeps 8 bits: a few per cent of the largest element, far from float32's agreement
      assert.ok(err <= 5e-2 * scale, `${params[i].name}: ${err} vs scale ${scale}`);
      assert.ok(err > 0, `${params[i].name}: bit-identical to float32, so nothing ran in bfloat16`);
    });
    bp.amp.autoMixedPrecision(net, 'O0');
    assert.equal(vg(x, y)[0].item(), l32.item());
  });
});

test('DynamicLossScaler: halved on an overflow, grown after scaleWindow finite steps, not below 1', () => {
  const s = new bp.amp.DynamicLossScaler(4, 2, 2);
  assert.deepEqual([s.scaleFactor, s.scaleWindow, s.currentScale], [2, 2, 4]);
  const yes = bp.ones([], { dtype: 'bool' });
  const no = bp.zeros([], { dtype: 'bool' });
  const seen = [];
  for (const f of [yes, yes, yes, no, no, no, no, yes]) {
    s.adjust(f);
    seen.push(s.currentScale);
  }
  assert.deepEqual(seen, [4, 8, 8, 4, 2, 1, 1, 1]);
  assert.equal(s.counter.item(), 1);
  bp.tidy(() => {
    assert.equal(s.scale(bp.scalar(3)).item(), 3);
    const fixed = new bp.amp.StaticLossScaler(128);
    assert.equal(fixed.scale(bp.scalar(0.5)).item(), 64);
    assert.deepEqual(Array.from(fixed.unscale([bp.tensor([256, 64])])[0].dataSync()), [2, 0.5]);
    fixed.adjust(no);
    assert.equal(fixed.currentScale, 128);
  });
  assert.throws(() => new bp.amp.DynamicLossScaler(4, 2, 0.5), /scaleWindow must be a positive integer/);
  yes.dispose();
  no.dispose();
});

test('LossScaler state and loadState: what a checkpoint keeps, restored; bad states change nothing', () => {
  const s = new bp.amp.DynamicLossScaler(8, 2, 4);
  const yes = bp.ones([], { dtype: 'bool' });
  s.adjust(yes);
  assert.deepEqual(s.state(), { loss_scale: 8, loss_scale_finite_steps: 1 });
  const resumed = new bp.amp.DynamicLossScaler(65536, 2, 4);
  resumed.loadState(s.state());
  assert.deepEqual(resumed.state(), s.state());
  for (let i = 0; i < 3; i++) resumed.adjust(yes);  // 4 finite steps in a row: the scale grows
  assert.equal(resumed.currentScale, 16);
  assert.throws(() => resumed.loadState({ loss_scale: 0.5, loss_scale_finite_steps: 0 }),
    (e) => e instanceof bp.ValueError && /loss_scale must be a finite float32 number >= 1, got 0.5/.test(e.message));
  assert.throws(() => resumed.loadState({ loss_scale: 2, loss_scale_finite_steps: 4 }), /whole number in \[0, 4\)/);
  assert.throws(() => resumed.loadState({ loss_scale: 2 }), /has no 'loss_scale_finite_steps'/);
  assert.throws(() => resumed.loadState({ loss_scale: '2', loss_scale_finite_steps: 0 }), /must be a number/);
  assert.throws(() => resumed.loadState(null), bp.ValueError);
  assert.deepEqual(resumed.state(), { loss_scale: 16, loss_scale_finite_steps: 0 });
  const fixed = new bp.amp.StaticLossScaler(128);
  assert.deepEqual(fixed.state(), { loss_scale: 128 });
  assert.throws(() => fixed.loadState({ loss_scale: 2, loss_scale_finite_steps: 0 }), /is not part of its state/);
  fixed.loadState({ loss_scale: 256 });
  assert.equal(fixed.currentScale, 256);
  yes.dispose();
});

test('allFinite and the gated optimizer step: a false flag changes nothing, step counts included', () => {
  bp.tidy(() => {
    assert.equal(bp.amp.allFinite([bp.tensor([1, 2]), bp.tensor([3], { dtype: 'float16' })]).item(), 1);
    assert.equal(bp.amp.allFinite([bp.tensor([1, Infinity])]).item(), 0);
    assert.equal(bp.amp.allFinite([bp.tensor([NaN], { dtype: 'bfloat16' })]).item(), 0);
    assert.equal(bp.amp.allFinite([]).item(), 1);
    const w = new bp.Parameter(bp.tensor([1, 2, 3]), 'w');
    const opt = new bp.optim.Adam([w], 0.1);
    const before = bits(w);
    opt.step([bp.tensor([1, 1, 1])], bp.zeros([], { dtype: 'bool' }));
    assert.ok(bits(w).equals(before));
    assert.equal(opt.stepCount, 0);
    opt.step([bp.tensor([1, 1, 1])], bp.ones([], { dtype: 'bool' }));
    assert.ok(!bits(w).equals(before));
    assert.equal(opt.stepCount, 1);
    assert.throws(() => opt.step([bp.tensor([1, 1, 1])], true), /applyIf must be a 0-d bool tensor/);
  });
});

test('TrainOneStepWithLossScaleCell, eager and jitted: the same bits, an infinite loss skips the step', () => {
  const x = bp.randn([12, 6], { seed: 5 });
  const y = bp.tensor(Array.from({ length: 12 }, (_, i) => i % 3), { dtype: 'int32' });
  const run = (useJit) => {
    bp.nn.setSeed(9);
    const net = bp.amp.autoMixedPrecision(new Mlp(), 'O2', 'float16');
    const ce = new bp.nn.CrossEntropyLoss();
    // the loss times k: k = Infinity makes it overflow as a float16 forward can
    class Scaled extends bp.nn.Cell {
      constructor() {
        super();
        this.net = net;
      }
      construct(a, b, k) {
        return ce(this.net(a), b).mul(k);
      }
    }
    const scaler = new bp.amp.DynamicLossScaler(1024, 2, 3);
    const opt = new bp.optim.Adam(net.trainableParams(), 0.01);
    const cell = new bp.nn.TrainOneStepWithLossScaleCell(new Scaled(), opt, scaler);
    let step = (a, b, k) => cell(a, b, k);
    if (useJit) step = bp.jit(step);
    const log = [];
    for (let i = 0; i < 8; ++i) {
      bp.tidy(() => {
        const k = bp.scalar(i === 4 ? Infinity : 1);
        const [loss, overflow, scale] = step(x, y, k);
        log.push({ loss: bits(loss), overflow: overflow.item(), scale: scale.item() });
      });
    }
    return { log, params: net.trainableParams(), scaler, opt };
  };
  const eager = run(false);
  const jitted = run(true);
  assert.deepEqual(
    eager.log.map((s) => s.overflow),
    [0, 0, 0, 0, 1, 0, 0, 0],
  );
  assert.deepEqual(
    eager.log.map((s) => s.scale),
    [1024, 1024, 1024, 2048, 2048, 1024, 1024, 1024],
  );
  assert.equal(eager.scaler.currentScale, 2048);
  assert.equal(eager.opt.stepCount, 7);
  eager.log.forEach((s, i) => {
    assert.equal(jitted.log[i].overflow, s.overflow, `overflow of step ${i}`);
    assert.equal(jitted.log[i].scale, s.scale, `scale of step ${i}`);
    assert.ok(jitted.log[i].loss.equals(s.loss), `loss of step ${i}`);
  });
  eager.params.forEach((p, i) => {
    assert.equal(p.dtype, 'float32');
    assert.ok(bits(jitted.params[i]).equals(bits(p)), p.name);
  });
  assert.equal(jitted.scaler.currentScale, 2048);
  assert.equal(jitted.opt.stepCount, 7);
});
