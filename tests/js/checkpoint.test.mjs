// Checkpoints in WebAssembly, and across builds: tests/data/checkpoints/golden_net.safetensors is written by
// the native build (tests/cpp/checkpoint_xbuild_test.cpp checks it still writes it byte for byte). Here the
// same seeded model built in WebAssembly must write the same bytes, and must read the file back exactly:
// a file written natively loads in JavaScript and the reverse, with identical weights.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { init, ValueError } from '../../web/index.js';
import { liveTensors } from './memory.mjs';

const bp = await init();

const golden = new Uint8Array(readFileSync(new URL('../data/checkpoints/golden_net.safetensors', import.meta.url)));
const GOLDEN_SEED = 2024;
const METADATA = { format: 'bprop-golden', model: 'GoldenNet' };

/** The model of tests/cpp/checkpoint_xbuild_test.cpp, built the same way: keep the two in step. */
class GoldenNet extends bp.nn.Cell {
  constructor(seed) {
    super();
    bp.nn.setSeed(seed);
    this.scale = new bp.Parameter(bp.tensor([1.5, -2.25], { dtype: 'float64' }), 'scale');
    this.steps = new bp.Parameter(bp.tensor([3, -7, 11], { dtype: 'int32' }), 'steps', false);
    this.mask = new bp.Parameter(bp.tensor([[true, false], [true, true]]), 'mask', false);
    this.fc1 = new bp.nn.Dense(3, 4);
    this.bn = new bp.nn.BatchNorm1d(4);
    this.fc2 = new bp.nn.Dense(4, 2, { weightInit: 'xavier_uniform', biasInit: 'zeros', dtype: 'float64' });
    this.emb = new bp.nn.Embedding(5, 2);
  }
  construct(x) {
    return this.fc1(x);
  }
}

/** Every parameter's name, dtype, shape and elements. */
const contents = (cell) =>
  cell.parametersAndNames().map(([name, p]) => ({ name, dtype: p.dtype, shape: p.shape, data: Array.from(p.dataSync()) }));

/** The header of a safetensors file, parsed here in JavaScript (not by the core). */
function header(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(view.getBigUint64(0, true));
  return { n, json: JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))) };
}

test('cross-build: WebAssembly writes the natively written golden file byte for byte', () => {
  const net = new GoldenNet(GOLDEN_SEED);
  const bytes = bp.saveCheckpoint(net, { metadata: METADATA });
  assert.ok(bytes instanceof Uint8Array);
  assert.equal(bytes.length, golden.length);
  assert.ok(Buffer.from(bytes).equals(Buffer.from(golden)), 'the bytes differ from tests/data/checkpoints/golden_net.safetensors');
});

test('cross-build: WebAssembly reads the native file into a fresh model with identical weights', () => {
  const reference = new GoldenNet(GOLDEN_SEED);
  const net = new GoldenNet(7);
  net.scale.assign(bp.zeros([2], { dtype: 'float64' }));
  net.steps.assign(bp.zeros([3], { dtype: 'int32' }));
  net.mask.assign(bp.zeros([2, 2], { dtype: 'bool' }));
  assert.notDeepEqual(contents(net), contents(reference));
  assert.deepEqual(bp.loadCheckpoint(net, golden), []);
  assert.deepEqual(contents(net), contents(reference));
  assert.deepEqual(net.scale.toArray(), [1.5, -2.25]);
  assert.deepEqual(net.steps.toArray(), [3, -7, 11]);
  assert.deepEqual(net.mask.toArray(), [[true, false], [true, true]]);
  assert.ok(Buffer.from(bp.saveCheckpoint(net, { metadata: METADATA })).equals(Buffer.from(golden)));
});

test('the golden file is plain safetensors: header, dtypes, offsets and raw little-endian data', () => {
  const { n, json } = header(golden);
  assert.equal(n % 8, 0);
  assert.deepEqual(Object.keys(json), [
    '__metadata__',
    'scale',
    'steps',
    'mask',
    'fc1.weight',
    'fc1.bias',
    'bn.gamma',
    'bn.beta',
    'bn.moving_mean',
    'bn.moving_variance',
    'fc2.weight',
    'fc2.bias',
    'emb.embedding_table',
  ]);
  assert.deepEqual(json.__metadata__, METADATA);
  assert.deepEqual(json.scale, { dtype: 'F64', shape: [2], data_offsets: [0, 16] });
  assert.deepEqual(json.steps, { dtype: 'I32', shape: [3], data_offsets: [16, 28] });
  assert.deepEqual(json.mask, { dtype: 'BOOL', shape: [2, 2], data_offsets: [28, 32] });
  assert.equal(json['fc2.weight'].dtype, 'F64');
  const data = golden.subarray(8 + n);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  assert.deepEqual([view.getFloat64(0, true), view.getFloat64(8, true)], [1.5, -2.25]);
  assert.deepEqual([view.getInt32(16, true), view.getInt32(20, true), view.getInt32(24, true)], [3, -7, 11]);
  assert.deepEqual(Array.from(data.subarray(28, 32)), [1, 0, 1, 1]);
  const [begin, end] = json['fc1.weight'].data_offsets;
  const w = new Float32Array(data.slice(begin, end).buffer);
  assert.deepEqual(Array.from(w), Array.from(new GoldenNet(GOLDEN_SEED).fc1.weight.dataSync()));
  assert.equal(json['emb.embedding_table'].data_offsets[1], data.length);
});

test('round trip: a model trained in WebAssembly saves and loads exactly; parseCheckpoint', () => {
  bp.nn.setSeed(11);
  const net = new bp.nn.SequentialCell(new bp.nn.Dense(4, 8), new bp.nn.BatchNorm1d(8), new bp.nn.ReLU(), new bp.nn.Dense(8, 3));
  const loss = new bp.nn.WithLossCell(net, new bp.nn.CrossEntropyLoss());
  const train = new bp.nn.TrainOneStepCell(loss, new bp.optim.Adam(net.trainableParams(), 0.05));
  const x = bp.randn([6, 4], 5);
  const y = bp.tensor([0, 1, 2, 0, 1, 2], { dtype: 'int32' });
  for (let i = 0; i < 5; ++i) bp.tidy(() => train(x, y));
  const bytes = bp.saveCheckpoint(net, { metadata: { epoch: '5' } });

  bp.nn.setSeed(99);
  const copy = new bp.nn.SequentialCell(new bp.nn.Dense(4, 8), new bp.nn.BatchNorm1d(8), new bp.nn.ReLU(), new bp.nn.Dense(8, 3));
  assert.notDeepEqual(contents(copy), contents(net));
  bp.loadCheckpoint(copy, bytes.buffer);
  assert.deepEqual(contents(copy), contents(net));
  net.setTrain(false);
  copy.setTrain(false);
  assert.deepEqual(bp.tidy(() => copy(x).toArray()), bp.tidy(() => net(x).toArray()));

  const parsed = bp.parseCheckpoint(bytes);
  assert.deepEqual(parsed.metadata, { epoch: '5' });
  assert.deepEqual([...parsed.tensors.keys()], net.parametersAndNames().map(([n]) => n));
  assert.deepEqual(parsed.tensors.get('1.moving_mean').toArray(), net.at(1).movingMean.toArray());
  assert.notDeepEqual(net.at(1).movingMean.toArray(), new Array(8).fill(0));
  for (const t of parsed.tensors.values()) t.dispose();

  // Named tensors too, and MindSpore's load_param_into_net.
  const named = bp.saveCheckpoint({ a: bp.tensor([1, 2]), b: bp.tensor([[true]]) });
  assert.deepEqual([...bp.parseCheckpoint(named).tensors.keys()], ['a', 'b']);
  const fresh = new bp.nn.Dense(4, 8);
  assert.deepEqual(bp.loadParamIntoNet(fresh, new Map([['weight', net.at(0).weight], ['bias', net.at(0).bias]])), []);
  assert.deepEqual(fresh.weight.toArray(), net.at(0).weight.toArray());
});

test('errors: the native messages; a failed load leaves the model unchanged', () => {
  const net = new GoldenNet(3);
  const before = contents(net);
  const fails = (bytes, pattern, options) =>
    assert.throws(
      () => bp.loadCheckpoint(net, bytes, options),
      (e) => e instanceof ValueError && pattern.test(e.message),
    );
  fails(golden.subarray(0, golden.length - 3), /^For 'load_checkpoint', '<memory>': truncated: tensor 'emb.embedding_table' ends at data byte/);
  fails(golden.subarray(0, 5), /truncated: 5 bytes, but a safetensors file starts with an 8-byte header length/);
  fails(new TextEncoder().encode('\x08\0\0\0\0\0\0\0not json'), /the header is not a JSON object/);
  fails(golden.subarray(0, golden.length - 3), /'weights.bin': truncated/, { source: 'weights.bin' });

  const other = new bp.nn.SequentialCell(new bp.nn.Dense(3, 5));
  const small = bp.saveCheckpoint(other);
  assert.throws(
    () => bp.loadCheckpoint(net, small),
    /tensor 'scale' of the model is missing from the checkpoint/,
  );
  const renamed = bp.saveCheckpoint([['fc1.weight', other.at(0).weight]]);
  assert.throws(
    () => bp.loadCheckpoint(net, renamed, { strict: false }),
    /tensor 'fc1.weight' has shape \(5, 3\) in the checkpoint but the model's parameter has shape \(4, 3\)/,
  );
  const asDouble = bp.saveCheckpoint([['fc1.weight', bp.zeros([4, 3], { dtype: 'float64' })]]);
  assert.throws(
    () => bp.loadCheckpoint(net, asDouble, { strict: false }),
    /tensor 'fc1.weight' has dtype F64 in the checkpoint but the model's parameter is float32/,
  );
  const extra = bp.saveCheckpoint(new Map([...bp.parseCheckpoint(golden).tensors, ['extra', bp.ones([1])]]));
  assert.throws(() => bp.loadCheckpoint(net, extra), /the checkpoint has tensor 'extra' that the model does not have/);
  assert.deepEqual(contents(net), before, 'no failed load wrote anything');

  // Not strict: what the checkpoint has is loaded, the rest is reported.
  const partial = bp.saveCheckpoint([['scale', bp.tensor([7, 8], { dtype: 'float64' })], ['ignored', bp.ones([1])]]);
  const missing = bp.loadCheckpoint(net, partial, { strict: false });
  assert.equal(missing.length, before.length - 1);
  assert.ok(!missing.includes('scale'));
  assert.deepEqual(net.scale.toArray(), [7, 8]);

  assert.throws(() => bp.saveCheckpoint([['x', bp.ones([1])], ['x', bp.ones([1])]]), /For 'save_checkpoint', buffer: the name 'x' is used twice/);
  assert.throws(() => bp.saveCheckpoint({ x: 3 }), /'x' is not a tensor/);
  assert.throws(() => bp.saveCheckpoint(bp.ones([1]), {}), ValueError);
  assert.throws(() => bp.saveCheckpoint({ x: bp.ones([1]) }, { metadata: { k: 1 } }), /metadata entry 'k' must be a string/);
  assert.throws(() => bp.loadCheckpoint(net, 'bytes'), /expected the checkpoint as a Uint8Array or ArrayBuffer/);
});

test('memory: saving and loading leave bp.memory() flat', () => {
  const net = new GoldenNet(GOLDEN_SEED);
  const before = liveTensors(bp);
  for (let i = 0; i < 50; ++i) {
    const bytes = bp.saveCheckpoint(net);
    bp.loadCheckpoint(net, bytes);
    assert.throws(() => bp.loadCheckpoint(net, bytes.subarray(0, 100)));
  }
  assert.deepEqual(liveTensors(bp), before);
});
