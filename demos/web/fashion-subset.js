// Reads the Fashion-MNIST subset file written by scripts/make-fashion-subset.mjs (format: docs/fashion-subset.md).
// Plain JavaScript with no imports, so the training worker and the Node tests share it.

export const FASHION_MAGIC = 'BPFMNIST';
export const FASHION_VERSION = 1;
export const FASHION_HEADER_BYTES = 32;

/** Fashion-MNIST's class names, by label. */
export const FASHION_CLASSES = ['T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat', 'Sandal', 'Shirt', 'Sneaker', 'Bag', 'Ankle boot'];

/**
 * Parses the file's bytes (ArrayBuffer or Uint8Array): { version, classes, rows, cols, train, test } where train and
 * test are { count, pixels: Uint8Array(count*rows*cols), labels: Uint8Array(count) } viewing the same memory.
 * Throws an Error saying what is wrong for a file that is not one, of another version, truncated or too long, or
 * with a label out of range.
 */
export function parseFashionSubset(input) {
  const bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
  const what = 'fashion-subset.bin';
  if (bytes.length < FASHION_HEADER_BYTES) throw new Error(`${what}: ${bytes.length} bytes, shorter than the ${FASHION_HEADER_BYTES}-byte header`);
  const magic = String.fromCharCode(...bytes.subarray(0, 8));
  if (magic !== FASHION_MAGIC) throw new Error(`${what}: bad magic ${JSON.stringify(magic)}, expected "${FASHION_MAGIC}"`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const u32 = (off) => view.getUint32(off, true);
  const version = u32(8);
  if (version !== FASHION_VERSION) throw new Error(`${what}: format version ${version}, this reader knows ${FASHION_VERSION}`);
  const [classes, nTrain, nTest, rows, cols] = [12, 16, 20, 24, 28].map(u32);
  if (classes < 1 || classes > 255) throw new Error(`${what}: ${classes} classes`);
  const px = rows * cols;
  const expected = FASHION_HEADER_BYTES + (nTrain + nTest) * (px + 1);
  if (bytes.length !== expected) {
    throw new Error(`${what}: ${bytes.length} bytes, the header (${nTrain} + ${nTest} images of ${rows}x${cols}) needs ${expected}`);
  }
  let at = FASHION_HEADER_BYTES;
  const split = (count) => {
    const pixels = bytes.subarray(at, at + count * px);
    at += count * px;
    const labels = bytes.subarray(at, at + count);
    at += count;
    const bad = labels.findIndex((l) => l >= classes);
    if (bad >= 0) throw new Error(`${what}: label ${labels[bad]} at ${bad} is not below ${classes}`);
    return { count, pixels, labels };
  };
  const train = split(nTrain);
  const test = split(nTest);
  return { version, classes, rows, cols, train, test };
}

/** The pixels of a split as float32 in [0, 1], shaped [count, rows*cols] row-major. */
export function toUnitFloats(pixels) {
  const out = new Float32Array(pixels.length);
  for (let i = 0; i < pixels.length; i++) out[i] = pixels[i] / 255;
  return out;
}
