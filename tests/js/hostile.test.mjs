// Hostile input in the WebAssembly build: sizes near INT64_MAX, tensors past the heap's ceiling, allocations the
// heap cannot satisfy, numbers that are not ints, JSON nested too deeply. Each is a typed Error (never a trap,
// never `undefined` thrown), and the module goes on working with nothing leaked.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { BpropError, init, MemoryError, ShapeError, ValueError } from '../../web/index.js';
import { liveTensors } from './memory.mjs';

const bp = await init();

/** Runs fn in a tidy scope; expects an error of class Cls whose message holds every fragment; then checks that
 * the heap holds what it held before and the next op works. */
function expectError(Cls, fn, fragments = []) {
  const before = liveTensors(bp);
  let caught;
  try {
    bp.tidy(fn);
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof Cls, `expected ${Cls.name}, got ${caught?.name}: ${caught?.message ?? caught}`);
  assert.ok(caught instanceof BpropError && caught instanceof Error);
  for (const f of fragments) assert.ok(caught.message.includes(f), `"${f}" not in: ${caught.message}`);
  assert.deepEqual(liveTensors(bp), before, 'tensors leaked');
  assert.equal(bp.tidy(() => bp.tensor(2).mul(3).item()), 6, 'the module is no longer usable');
  return caught;
}

test('MemoryError is exported and has the kind "memory"', () => {
  assert.equal(bp.MemoryError, MemoryError);
  const e = new MemoryError('m');
  assert.equal(e.kind, 'memory');
  assert.equal(e.name, 'MemoryError');
});

test('bp.nn and checkpoints map every error kind as ops do: a layer too large for the heap is a MemoryError', () => {
  // 65536 x 65536 float32 weights: 2^32 elements, past the WebAssembly build's limits
  expectError(MemoryError, () => new bp.nn.Dense(65536, 65536), ['(65536, 65536) float32', 'limit']);
  expectError(ValueError, () => new bp.nn.Dense(-1, 2), ['Dense']);
});

test('slice: begin + size past the dimension, with size near INT64_MAX (once a trap)', () => {
  const x = bp.ones([5, 1]);
  expectError(ValueError, () => bp.ops.slice(x, { begin: [5, 0], size: [2 ** 62, 1] }), [
    "For 'slice', begin[0] + size[0] = 5 + 4611686018427387904 exceeds dim 0 of size 5",
  ]);
  // 9223372036854775807 is 2^63 as a JavaScript number: past int64, refused as such.
  expectError(ValueError, () => bp.ops.slice(x, { begin: [5, 0], size: [9223372036854775807, 1] }), [
    "For 'slice', attribute 'size' must hold integers, got 9.223372036854776e+18 at [0] (outside the int64 range)",
  ]);
  expectError(ValueError, () => bp.ops.slice(x, { begin: [[[[5]]]], size: [1, 1] }), ["For 'slice'", "'begin'"]);
  x.dispose();
});

test('a 0 x 1073741824 input summed over axis 0 asks for 4 GB: a MemoryError naming the op and the bytes', () => {
  const x = bp.zeros([0, 1073741824]);
  assert.deepEqual(x.shape, [0, 1073741824]);
  expectError(MemoryError, () => x.sum({ axis: 0 }), [
    "For 'sum', the output of shape (1073741824,) float32",
    '4294967296 bytes',
    'limit of 2147483648',
  ]);
  x.dispose();
});

test('an int32 tensor of 2^31 elements (its byte count once wrapped) is refused before any kernel', () => {
  const i = bp.tensor([0], { dtype: 'int32' });
  expectError(MemoryError, () => bp.ops.broadcastTo(i, { shape: [2147483648] }), ["For 'broadcast_to'", '(2147483648,)']);
  i.dispose();
});

test('an allocation under the limit that the heap cannot satisfy is a MemoryError too, and the heap recovers', () => {
  // 2,147,200,000 bytes: within the 2 GiB limit, more than the heap can grow to with the module already in it.
  expectError(MemoryError, () => bp.zeros([536800000]), ['cannot allocate 2147200000 bytes']);
  expectError(MemoryError, () => bp.ones([1]).broadcastTo([536800000]), ["For 'broadcast_to'", '2147200000 bytes']);
});

test('shapes past the limits and with huge ranks', () => {
  expectError(MemoryError, () => bp.zeros([1 << 30, 1 << 30]), ['more than the limit of 2147483647']);
  expectError(ShapeError, () => bp.zeros(new Array(65).fill(1)), ['65', 'limit of 64']);
  expectError(ValueError, () => bp.zeros([1e300]), ['1e+300']);
  expectError(ValueError, () => bp.tensor([1, 2], { shape: [9223372036854775807, 2] }), ['2 values']);
  let deep = [1];
  for (let i = 0; i < 100000; ++i) deep = [deep];
  expectError(ShapeError, () => bp.tensor(deep), ['more than 64 deep']);
  expectError(ValueError, () => bp.tensor([1, 'a']), ['numbers or booleans, got a string']);
  expectError(ValueError, () => bp.tensor([[1], [null]]), ['got a null']);
  const x = bp.ones([2]);
  expectError(MemoryError, () => bp.ops.tile(x, { multiples: [2 ** 62] }), ["For 'tile'"]);
  expectError(MemoryError, () => bp.ops.pad(x, { paddings: [[2 ** 62, 2 ** 62]] }), ["For 'pad'"]);
  x.dispose();
});

test('creation functions: counts and seeds must be whole numbers in range', () => {
  expectError(ValueError, () => bp.linspace(0, 1, 1e300), ["linspace: 'num' must be an integer, got 1e+300"]);
  expectError(ValueError, () => bp.eye(2.5), ["eye: 'n' must be an integer, got 2.5"]);
  expectError(MemoryError, () => bp.eye(2 ** 40), ['(1099511627776, 1099511627776)']);
  expectError(ValueError, () => bp.randn([2], { seed: -1 }), ["randn: 'seed' must be a non-negative integer, got -1"]);
  expectError(ValueError, () => bp.rand([2], { seed: 1e300 }), ["rand: 'seed'"]);
  expectError(ValueError, () => bp.arange(0, Infinity), ['must be finite']);
  expectError(MemoryError, () => bp.arange(0, 1e300), ['arange: [0, 1e+300) by 1 holds 1e+300 values']);
});

test('numbers that are not ints in int attributes are refused as such, shown as written', () => {
  const x = bp.ones([2, 3]);
  expectError(ValueError, () => x.sum({ axis: 1e300 }), ["attribute 'axis'", '1e+300']);
  expectError(ValueError, () => bp.ops.softmax(x, { axis: 1.5 }), ['1.5', 'not a whole number']);
  const labels = bp.tensor([0, 1], { dtype: 'int32' });
  expectError(ValueError, () => bp.ops.crossEntropy(x, labels, { labelSmoothing: 1.0000001 }), ['got 1.0000001']);
  expectError(ValueError, () => bp.ops.smoothL1Loss(x, x, { beta: -1e-300 }), ['got -1e-300']);
  x.dispose();
  labels.dispose();
});

test('a vector file nested 100000 deep is a reading error, not a crash or `undefined` thrown', () => {
  const deep = '['.repeat(100000) + ']'.repeat(100000);
  for (const [data, attr] of [['[1]', deep], [deep, '0']]) {
    const text = `{"format": "bprop-vectors/1", "source": "t", "cases": [{"name": "a", "inputs": {"x": {"shape": [1],
      "dtype": "float32", "data": ${data}}}, "program": [["y", "sum", "x", {"axis": ${attr}}]], "output": "y",
      "wrt": [], "expected": {"error": "value"}}]}`;
    const r = bp.runVectors(text, 'deep.json');
    assert.equal(r.errors.length, 1);
    assert.match(r.errors[0], /nests lists and objects 10000\d deep, more than the limit of 64/);
  }
});

test('a checkpoint header nested too deeply is a ValueError', () => {
  const header = `{"a": ${'['.repeat(10000)}${']'.repeat(10000)}}`;
  const bytes = new Uint8Array(8 + header.length);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(header.length), true);
  bytes.set(new TextEncoder().encode(header), 8);
  expectError(ValueError, () => bp.parseCheckpoint(bytes), ["For 'load_checkpoint'", '10001 deep']);
});

test('a function returning arrays nested past 64 deep is a ValueError, with nothing left in the heap', () => {
  let out = null;
  const f = (x) => {
    out = x.mul(2);
    for (let i = 0; i < 100; ++i) out = [out];
    return out;
  };
  expectError(ValueError, () => bp.vjp(f, [bp.ones([2])], bp.ones([2])), ['nested more than 64 deep']);
});
