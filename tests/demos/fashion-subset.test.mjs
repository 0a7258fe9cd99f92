// The Fashion-MNIST subset the training page loads (demos/web/data/fashion-subset.bin, docs/fashion-subset.md):
// its header and counts, class balance, the reader's errors, that scripts/serve.mjs serves it to fetch, and, where
// the Debian package dataset-fashion-mnist is installed, that the generator reproduces it byte for byte from
// images that really are in the training and test files.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { FASHION_CLASSES, parseFashionSubset, toUnitFloats } from '../../demos/web/fashion-subset.js';
import { root, startServer } from './harness.mjs';

const FILE = join(root, 'demos', 'web', 'data', 'fashion-subset.bin');
const SCRIPT = join(root, 'scripts', 'make-fashion-subset.mjs');
const DATA_DIR = '/usr/share/datasets/fashion-mnist';
const bytes = readFileSync(FILE);
const noDataset = ['train-images-idx3-ubyte', 'train-labels-idx1-ubyte', 't10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte']
  .every((f) => existsSync(join(DATA_DIR, f)) || existsSync(join(DATA_DIR, `${f}.gz`)))
  ? false
  : `${DATA_DIR} lacks the IDX files: install the Debian package dataset-fashion-mnist to check the generator`;

function counts(labels, classes) {
  const n = new Array(classes).fill(0);
  for (const l of labels) n[l]++;
  return n;
}

test('fashion subset: header, sizes and class balance', () => {
  assert.equal(bytes.subarray(0, 8).toString('latin1'), 'BPFMNIST');
  const header = [8, 12, 16, 20, 24, 28].map((o) => bytes.readUInt32LE(o));
  assert.deepEqual(header, [1, 10, 1000, 200, 28, 28], 'version, classes, train, test, rows, cols');
  assert.equal(bytes.length, 32 + 1200 * (784 + 1));
  assert.ok(bytes.length < 1_000_000, `${bytes.length} bytes`);
  const d = parseFashionSubset(bytes);
  assert.equal(d.classes, FASHION_CLASSES.length);
  assert.deepEqual([d.rows, d.cols, d.train.count, d.test.count], [28, 28, 1000, 200]);
  assert.deepEqual(counts(d.train.labels, 10), new Array(10).fill(100));
  assert.deepEqual(counts(d.test.labels, 10), new Array(10).fill(20));
  // Classes are interleaved, not in blocks: a prefix already holds most of them.
  assert.ok(new Set(d.train.labels.subarray(0, 30)).size >= 7, 'the first 30 training labels mix the classes');
  assert.ok(new Set(d.test.labels.subarray(0, 30)).size >= 7, 'the first 30 test labels (shown on the page) mix the classes');
  // Every image has content, and the pixels use the whole grey range.
  for (const split of [d.train, d.test]) {
    for (let i = 0; i < split.count; i++) {
      assert.ok(split.pixels.subarray(i * 784, (i + 1) * 784).some((v) => v > 0), `image ${i} is blank`);
    }
  }
  assert.equal(d.train.pixels.reduce((m, v) => Math.max(m, v), 0), 255);
  const f = toUnitFloats(d.test.pixels.subarray(0, 784));
  assert.ok(f.every((v) => v >= 0 && v <= 1) && f.length === 784);
});

test('fashion subset: the reader rejects what is not a subset file', () => {
  const bad = (mutate) => {
    const b = Uint8Array.from(bytes);
    return mutate(b) ?? b;
  };
  assert.throws(() => parseFashionSubset(bytes.subarray(0, 20)), /shorter than the 32-byte header/);
  assert.throws(() => parseFashionSubset(bad((b) => { b[0] = 0x58; })), /bad magic/);
  assert.throws(() => parseFashionSubset(bad((b) => { b[8] = 2; })), /format version 2/);
  assert.throws(() => parseFashionSubset(bytes.subarray(0, bytes.length - 1)), /needs 942032/);
  assert.throws(() => parseFashionSubset(bad((b) => { b[32 + 1000 * 784] = 10; })), /label 10 at 0 is not below 10/);
  // An ArrayBuffer (what fetch gives) reads the same as a Uint8Array.
  const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);
  assert.deepEqual(Array.from(parseFashionSubset(ab).test.labels), Array.from(parseFashionSubset(bytes).test.labels));
});

test('fashion subset: scripts/serve.mjs serves it to fetch + arrayBuffer', { timeout: 30_000 }, async () => {
  const server = await startServer();
  try {
    const res = await fetch(new URL('demos/web/data/fashion-subset.bin', server.url));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/octet-stream');
    const got = new Uint8Array(await res.arrayBuffer());
    assert.equal(Buffer.compare(Buffer.from(got), bytes), 0, 'the served bytes are the file');
  } finally {
    await server.stop();
  }
});

function readIdx(name) {
  const plain = join(DATA_DIR, name);
  let b = readFileSync(existsSync(plain) ? plain : `${plain}.gz`);
  if (b[0] === 0x1f && b[1] === 0x8b) b = gunzipSync(b);
  return b.subarray(4 + 4 * b[3]);
}

test('fashion subset: the generator reproduces the committed file from the installed data set', { skip: noDataset, timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'fashion-subset-'));
  try {
    const out = join(dir, 'subset.bin');
    execFileSync(process.execPath, [SCRIPT, '--data', DATA_DIR, '--out', out], { stdio: 'pipe' });
    assert.equal(Buffer.compare(readFileSync(out), bytes), 0, 'byte for byte the committed file');
    // Another seed gives another selection with the same balance.
    execFileSync(process.execPath, [SCRIPT, '--out', out, '--seed', '2', '--train-per-class', '3', '--test-per-class', '1'], { stdio: 'pipe' });
    const other = parseFashionSubset(readFileSync(out));
    assert.deepEqual([other.train.count, other.test.count], [30, 10]);
    assert.deepEqual(counts(other.train.labels, 10), new Array(10).fill(3));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // Training images come from the training file with their labels; test images from t10k, and none of them is
  // one of the subset's training images (held out).
  const d = parseFashionSubset(bytes);
  const index = (pixels, labels) => {
    const m = new Map();
    for (let i = 0; i < labels.length; i++) m.set(Buffer.from(pixels.subarray(i * 784, (i + 1) * 784)).toString('latin1'), labels[i]);
    return m;
  };
  const train = index(readIdx('train-images-idx3-ubyte'), readIdx('train-labels-idx1-ubyte'));
  const t10k = index(readIdx('t10k-images-idx3-ubyte'), readIdx('t10k-labels-idx1-ubyte'));
  const key = (s, i) => Buffer.from(s.pixels.subarray(i * 784, (i + 1) * 784)).toString('latin1');
  for (let i = 0; i < d.train.count; i++) assert.equal(train.get(key(d.train, i)), d.train.labels[i], `training image ${i}`);
  const subsetTrain = new Set(Array.from({ length: d.train.count }, (_, i) => key(d.train, i)));
  assert.equal(subsetTrain.size, d.train.count, 'no training image twice');
  for (let i = 0; i < d.test.count; i++) {
    assert.equal(t10k.get(key(d.test, i)), d.test.labels[i], `test image ${i}`);
    assert.ok(!subsetTrain.has(key(d.test, i)), `test image ${i} is also a training image`);
  }
});
