#!/usr/bin/env node
// Writes the Fashion-MNIST subset the training demo loads (demos/web/data/fashion-subset.bin) from the IDX files
// of the Debian package dataset-fashion-mnist (/usr/share/datasets/fashion-mnist), gzip-compressed or not.
//
//   node scripts/make-fashion-subset.mjs [--data DIR] [--out FILE] [--train-per-class N] [--test-per-class N]
//                                        [--seed S]
//
// Defaults: --data /usr/share/datasets/fashion-mnist, --out demos/web/data/fashion-subset.bin,
// 100 training images per class (from train-*), 20 held-out test images per class (from t10k-*), seed 1.
// With the defaults the output is the committed file, byte for byte (tests/demos/fashion-subset.test.mjs).
//
// The file (docs/fashion-subset.md), all integers little-endian:
//   offset  size  field
//        0     8  magic, the ASCII bytes "BPFMNIST"
//        8     4  uint32 format version, 1
//       12     4  uint32 number of classes, 10
//       16     4  uint32 number of training images, nTrain
//       20     4  uint32 number of test images, nTest
//       24     4  uint32 rows per image, 28
//       28     4  uint32 columns per image, 28
//       32         nTrain*rows*cols uint8 training pixels (image-major, then row-major; 0 = background)
//                  nTrain uint8 training labels (0..classes-1)
//                  nTest*rows*cols uint8 test pixels
//                  nTest uint8 test labels
//
// Selection, reproducible from the seed: one mulberry32 stream seeded with --seed. For the training split, then the
// test split: for each class 0..9 in turn, the indices of that class in file order are shuffled (Fisher-Yates,
// j = floor(u * (i + 1)) for i from the last index down to 1) and the first N kept; the kept indices of all
// classes, concatenated in class order, are shuffled once more so the classes are interleaved in the file.
import { readFileSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
// (mulberry32, the same numbers on every platform; the generator of the demos' toy data)
import { rng as mulberry32 } from '../demos/web/toy-data.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export const DEFAULTS = {
  data: '/usr/share/datasets/fashion-mnist',
  out: join(repoRoot, 'demos', 'web', 'data', 'fashion-subset.bin'),
  trainPerClass: 100,
  testPerClass: 20,
  seed: 1,
};
export const MAGIC = 'BPFMNIST';
export const VERSION = 1;
export const HEADER_BYTES = 32;
const CLASSES = 10;

function shuffle(list, rand) {
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [list[i], list[j]] = [list[j], list[i]];
  }
  return list;
}

/** The IDX file `<dir>/<name>` or `<dir>/<name>.gz` (told apart by the gzip magic); { dims, data }. */
export function readIdx(dir, name) {
  const plain = join(dir, name);
  const path = existsSync(plain) ? plain : `${plain}.gz`;
  if (!existsSync(path)) throw new Error(`${plain}(.gz) not found: install the Debian package dataset-fashion-mnist or pass --data DIR`);
  let bytes = readFileSync(path);
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = gunzipSync(bytes);
  if (bytes.length < 4 || bytes[0] !== 0 || bytes[1] !== 0) throw new Error(`${path}: not an IDX file (bad magic number)`);
  if (bytes[2] !== 0x08) throw new Error(`${path}: element type 0x${bytes[2].toString(16)}, only unsigned bytes (0x08) are read`);
  const rank = bytes[3];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 4 + 4 * rank) throw new Error(`${path}: truncated header`);
  const dims = Array.from({ length: rank }, (_, i) => view.getUint32(4 + 4 * i, false));
  const start = 4 + 4 * rank;
  const size = dims.reduce((a, b) => a * b, 1);
  if (bytes.length !== start + size) throw new Error(`${path}: ${bytes.length - start} data bytes, the header declares ${size}`);
  return { path, dims, data: bytes.subarray(start) };
}

function readSplit(dir, prefix) {
  const images = readIdx(dir, `${prefix}-images-idx3-ubyte`);
  const labels = readIdx(dir, `${prefix}-labels-idx1-ubyte`);
  if (images.dims.length !== 3) throw new Error(`${images.path}: rank ${images.dims.length}, images need 3`);
  if (labels.dims.length !== 1 || labels.dims[0] !== images.dims[0]) {
    throw new Error(`${labels.path}: ${labels.dims[0]} labels for ${images.dims[0]} images`);
  }
  return { n: images.dims[0], rows: images.dims[1], cols: images.dims[2], pixels: images.data, labels: labels.data };
}

/** Class-balanced selection (see the file header): indices into the split. */
function select(split, perClass, rand) {
  const kept = [];
  for (let c = 0; c < CLASSES; c++) {
    const ofClass = [];
    for (let i = 0; i < split.n; i++) if (split.labels[i] === c) ofClass.push(i);
    if (ofClass.length < perClass) throw new Error(`class ${c} has ${ofClass.length} images, ${perClass} asked for`);
    kept.push(...shuffle(ofClass, rand).slice(0, perClass));
  }
  return shuffle(kept, rand);
}

/** The subset file's bytes. */
export function makeSubset({ data = DEFAULTS.data, trainPerClass = DEFAULTS.trainPerClass, testPerClass = DEFAULTS.testPerClass, seed = DEFAULTS.seed } = {}) {
  const train = readSplit(data, 'train');
  const test = readSplit(data, 't10k');
  if (train.rows !== test.rows || train.cols !== test.cols) throw new Error('train and t10k images differ in size');
  const { rows, cols } = train;
  const rand = mulberry32(seed);
  const parts = [train, test].map((split, k) => ({ split, idx: select(split, k === 0 ? trainPerClass : testPerClass, rand) }));
  const px = rows * cols;
  const total = HEADER_BYTES + parts.reduce((s, p) => s + p.idx.length * (px + 1), 0);
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  out.set(new TextEncoder().encode(MAGIC), 0);
  for (const [off, v] of [[8, VERSION], [12, CLASSES], [16, parts[0].idx.length], [20, parts[1].idx.length], [24, rows], [28, cols]]) {
    view.setUint32(off, v, true);
  }
  let at = HEADER_BYTES;
  for (const { split, idx } of parts) {
    for (const i of idx) {
      out.set(split.pixels.subarray(i * px, (i + 1) * px), at);
      at += px;
    }
    for (const i of idx) out[at++] = split.labels[i];
  }
  return out;
}

function parseArgs(argv) {
  const opts = { ...DEFAULTS };
  const keys = { '--data': 'data', '--out': 'out', '--train-per-class': 'trainPerClass', '--test-per-class': 'testPerClass', '--seed': 'seed' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') {
      console.log('usage: node scripts/make-fashion-subset.mjs [--data DIR] [--out FILE] [--train-per-class N] [--test-per-class N] [--seed S]');
      process.exit(0);
    }
    const key = keys[a];
    if (!key || i + 1 >= argv.length) throw new Error(`unknown or incomplete argument: ${a} (try --help)`);
    const v = argv[++i];
    if (key === 'data' || key === 'out') opts[key] = resolve(v);
    else {
      opts[key] = Number(v);
      if (!Number.isInteger(opts[key]) || opts[key] < 0) throw new Error(`${a} needs a non-negative integer, got ${v}`);
    }
  }
  return opts;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  try {
    const opts = parseArgs(process.argv.slice(2));
    const bytes = makeSubset(opts);
    mkdirSync(dirname(opts.out), { recursive: true });
    writeFileSync(opts.out, bytes);
    console.log(`wrote ${opts.out}: ${bytes.length} bytes (${opts.trainPerClass * CLASSES} training, ${opts.testPerClass * CLASSES} test images, seed ${opts.seed})`);
  } catch (e) {
    console.error(`make-fashion-subset: ${e.message}`);
    process.exit(1);
  }
}
