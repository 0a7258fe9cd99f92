// The transformer layers from JavaScript: bp.nn.MultiheadAttention, TransformerEncoderLayer and GPT against PyTorch
// float64 (tests/data/transformer/layers.safetensors, PyTorch state dicts loaded with strict key matching), the
// forward options, generation and attention maps, checkpoints with PyTorch's keys, jit, errors and memory.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { init, ShapeError, ValueError } from '../../web/index.js';
import { liveTensors } from './memory.mjs';

const bp = await init();
const ref = bp.parseCheckpoint(readFileSync(new URL('../data/transformer/layers.safetensors', import.meta.url)));

/** The reference tensors of a case under `what` ("param", "input", "grad"), by name. */
function part(caseName, what) {
  const prefix = `${caseName}/${what}/`;
  const out = new Map();
  for (const [name, t] of ref.tensors) if (name.startsWith(prefix)) out.set(name.slice(prefix.length), t);
  return out;
}
const entry = (name) => {
  const t = ref.tensors.get(name);
  assert.ok(t, `reference ${name}`);
  return t;
};

function assertClose(got, want, what, tol = 1e-10) {
  assert.deepEqual(got.shape, want.shape, `${what}: shape`);
  const flat = (t) => [t.toArray()].flat(Infinity);
  const g = flat(got);
  const w = flat(want);
  for (let i = 0; i < w.length; i++) {
    assert.ok(Math.abs(g[i] - w[i]) <= tol * Math.max(1, Math.abs(w[i])), `${what}[${i}]: ${g[i]} vs ${w[i]}`);
  }
}

/** Weight gradients of sum(f() * cotangent) against the case's, by PyTorch name. */
function checkWeightGrads(cell, caseName, f) {
  const cot = entry(`${caseName}/input/cotangent`);
  const named = cell.parametersAndNames().filter(([, p]) => p.requiresGrad);
  const g = bp.grad(() => f().mul(cot).sum(), { gradPosition: null, weights: named.map(([, p]) => p) })();
  const want = part(caseName, 'grad');
  named.forEach(([name], i) => assertClose(g[i], want.get(name), `${caseName} d${name}`));
}

test('MultiheadAttention: PyTorch keys load strictly; masks, weights and gradients match PyTorch', () => {
  bp.tidy(() => {
    const mha = new bp.nn.MultiheadAttention(8, 2, { dtype: 'float64' });
    assert.deepEqual(
      mha.parametersAndNames().map(([n]) => n),
      ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias'],
    );
    assert.deepEqual(bp.loadParamIntoNet(mha, part('mha_self', 'param')), []);
    const x = entry('mha_self/input/query');
    const call = {
      attnMask: entry('mha_self/input/attn_mask'),
      keyPaddingMask: entry('mha_self/input/key_padding_mask'),
      needWeights: true,
    };
    const { output, weights } = mha.forward(x, x, x, call);
    assertClose(output, entry('mha_self/output'), 'output');
    assertClose(weights, entry('mha_self/weights'), 'weights');
    const cot = entry('mha_self/input/cotangent');
    const dx = bp.grad((q) => mha.forward(q, q, q, call).output.mul(cot).sum())(x);
    assertClose(dx, entry('mha_self/grad/query'), 'dquery');
    checkWeightGrads(mha, 'mha_self', () => mha.forward(x, x, x, call).output);
  });
});

test('MultiheadAttention with kdim/vdim and per-head float masks, batch first', () => {
  bp.tidy(() => {
    const mha = new bp.nn.MultiheadAttention(8, 4, { kdim: 6, vdim: 5, batchFirst: true, dtype: 'float64' });
    bp.loadParamIntoNet(mha, part('mha_cross', 'param'));
    const [q, k, v] = ['query', 'key', 'value'].map((n) => entry(`mha_cross/input/${n}`));
    const { output, weights } = mha.forward(q, k, v, {
      attnMask: entry('mha_cross/input/attn_mask'),
      needWeights: true,
      averageAttnWeights: false,
    });
    assertClose(output, entry('mha_cross/output'), 'output');
    assertClose(weights, entry('mha_cross/weights'), 'per-head weights');
    // construct without weights runs the fused op: the output of the kv case
    const m2 = new bp.nn.MultiheadAttention(8, 2, { batchFirst: true, dtype: 'float64' });
    bp.loadParamIntoNet(m2, part('mha_kv', 'param'));
    const [q2, k2, v2] = ['query', 'key', 'value'].map((n) => entry(`mha_kv/input/${n}`));
    assertClose(m2(q2, k2, v2), entry('mha_kv/output'), 'construct');
  });
});

test('TransformerEncoderLayer: post-norm relu with a src mask, pre-norm gelu causal', () => {
  bp.tidy(() => {
    const post = new bp.nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16, dropout: 0, dtype: 'float64' });
    bp.loadParamIntoNet(post, part('encoder_post_relu', 'param'));
    const src = entry('encoder_post_relu/input/src');
    const mask = entry('encoder_post_relu/input/src_mask');
    assertClose(post(src, mask), entry('encoder_post_relu/output'), 'post-norm');
    checkWeightGrads(post, 'encoder_post_relu', () => post(src, mask));

    const pre = new bp.nn.TransformerEncoderLayer(8, 2, {
      dimFeedforward: 16,
      dropout: 0,
      activation: 'gelu',
      batchFirst: true,
      normFirst: true,
      dtype: 'float64',
    });
    bp.loadParamIntoNet(pre, part('encoder_pre_gelu_causal', 'param'));
    const s2 = entry('encoder_pre_gelu_causal/input/src');
    assertClose(pre.forward(s2, { isCausal: true }).output, entry('encoder_pre_gelu_causal/output'), 'pre-norm');
    checkWeightGrads(pre, 'encoder_pre_gelu_causal', () => pre.forward(s2, { isCausal: true }).output);
  });
});

test('GPT: logits, loss and gradients match PyTorch; checkpoints carry PyTorch keys both ways', () => {
  bp.tidy(() => {
    const cfg = { vocabSize: 11, context: 8, layers: 2, heads: 2, width: 8, dtype: 'float64' };
    const gpt = new bp.nn.GPT(cfg);
    assert.equal(gpt.parametersAndNames()[0][0], 'wte.weight');
    bp.loadParamIntoNet(gpt, part('gpt_loss', 'param'));
    const ids = entry('gpt_logits/input/ids');
    const targets = entry('gpt_loss/input/targets');
    assertClose(gpt(ids), entry('gpt_logits/output'), 'logits');
    assertClose(gpt(ids, targets), entry('gpt_loss/output'), 'loss');
    checkWeightGrads(gpt, 'gpt_loss', () => gpt(ids, targets));
    // bytes saved here load into a fresh GPT strictly, the same logits
    const bytes = bp.saveCheckpoint(gpt);
    const again = new bp.nn.GPT(cfg);
    assert.deepEqual(bp.loadCheckpoint(again, bytes), []);
    assertClose(again(ids), entry('gpt_logits/output'), 'reloaded');
    // an untied PyTorch state dict does not load into a tied GPT
    const tied = new bp.nn.GPT({ ...cfg, layers: 1 });
    assert.throws(() => bp.loadParamIntoNet(tied, part('gpt_untied', 'param')), /lm_head\.weight/);
    const untied = new bp.nn.GPT({ ...cfg, layers: 1, tieWeights: false });
    bp.loadParamIntoNet(untied, part('gpt_untied', 'param'));
    assertClose(untied(ids), entry('gpt_untied/output'), 'untied logits');
    // jit: the same loss
    const jitted = bp.jit((a, b) => gpt(a, b));
    assertClose(jitted(ids, targets), entry('gpt_loss/output'), 'jit loss');
  });
});

test('GPT: seeded generation, causal attention maps, errors, no leaks', () => {
  bp.nn.setSeed(4);
  const gpt = new bp.nn.GPT({ vocabSize: 13, context: 6, layers: 2, heads: 2, width: 8 });
  gpt.generate([1], { tokens: 1 });  // (first calls may fill caches of the core)
  bp.tidy(() => gpt.attentionWeights([1]));
  const before = liveTensors(bp);
  const a = gpt.generate([1, 2, 3], { tokens: 10, temperature: 0.9, topK: 5, seed: 7 });
  assert.equal(a.length, 10);
  assert.deepEqual(gpt.generate([1, 2, 3], { tokens: 10, temperature: 0.9, topK: 5, seed: 7 }), a);
  assert.notDeepEqual(gpt.generate([1, 2, 3], { tokens: 10, temperature: 0.9, topK: 5, seed: 8 }), a);
  assert.ok(a.every((id) => Number.isInteger(id) && id >= 0 && id < 13));
  bp.tidy(() => {
    const maps = gpt.attentionWeights([1, 2, 3, 4]);
    assert.equal(maps.length, 2);
    assert.deepEqual(maps[0].shape, [1, 2, 4, 4]);
    const w = maps[1].toArray()[0][1];
    for (let i = 0; i < 4; i++) {
      assert.ok(Math.abs(w[i].reduce((s, x) => s + x, 0) - 1) < 1e-5);
      for (let j = i + 1; j < 4; j++) assert.equal(w[i][j], 0);
    }
  });
  assert.deepEqual(liveTensors(bp), before, 'generate and attentionWeights leave no tensor behind');
  assert.throws(() => gpt.generate([13], { tokens: 2 }), (e) => e instanceof ValueError && /vocab_size 13/.test(e.message));
  assert.throws(() => gpt.generate([1], { tokens: -1 }), ValueError);
  assert.throws(() => gpt.generate([1], { steps: 2 }), /unknown option 'steps'/);
  assert.throws(() => new bp.nn.MultiheadAttention(10, 3), (e) => e instanceof ValueError && /divisible/.test(e.message));
  bp.tidy(() => {
    const mha = new bp.nn.MultiheadAttention(8, 2);
    assert.throws(
      () => mha.forward(bp.zeros([4, 2, 8]), bp.zeros([4, 2, 8]), bp.zeros([4, 2, 8]), { attnMask: bp.zeros([3, 4]) }),
      (e) => e instanceof ShapeError && /attn_mask/.test(e.message),
    );
    assert.throws(() => gpt.attentionWeights(bp.tensor([0, 1, 2, 3, 4, 5, 6], { dtype: 'int32' })), ShapeError);
  });
});
