// Tensors in the WebAssembly heap: the Tensor and Parameter classes and the array conversions they use. Every
// operation goes through the Bprop instance that made the tensor (`_bp`), which owns the module.

import { ShapeError, ValueError } from './errors.js';
import { isPlainObject } from './util.js';

/** The typed array holding each dtype's elements as stored (the half dtypes' bits in a Uint16Array). */
export const TYPED = {
  float32: Float32Array,
  float64: Float64Array,
  int32: Int32Array,
  bool: Uint8Array,
  float16: Uint16Array,
  bfloat16: Uint16Array,
};

export const isHalf = (dtype) => dtype === 'float16' || dtype === 'bfloat16';

/** float16 / bfloat16 bits (a Uint16Array) -> their values in a Float32Array (exact). */
export function halfBitsToFloat32(bits, dtype) {
  const out = new Float32Array(bits.length);
  if (dtype === 'bfloat16') {
    const words = new Uint32Array(out.buffer);
    for (let i = 0; i < bits.length; ++i) words[i] = bits[i] << 16;
    return out;
  }
  for (let i = 0; i < bits.length; ++i) {
    const h = bits[i];
    const sign = h & 0x8000 ? -1 : 1;
    const exponent = (h >> 10) & 0x1f;
    const mantissa = h & 0x3ff;
    if (exponent === 0x1f) out[i] = mantissa ? NaN : sign * Infinity;
    else if (exponent === 0) out[i] = sign * mantissa * 2 ** -24;
    else out[i] = sign * (1024 + mantissa) * 2 ** (exponent - 25);
  }
  return out;
}

export function dtypeOfTypedArray(a) {
  if (a instanceof Float32Array) return 'float32';
  if (a instanceof Float64Array) return 'float64';
  if (a instanceof Int32Array) return 'int32';
  if (a instanceof Uint8Array) return 'bool';
  return 'float32';
}

/** The most dimensions a tensor may have (the core's kMaxRank): deeper nesting is refused, not followed. */
const MAX_RANK = 64;

export function flatten(data, shape, depth, out) {
  if (Array.isArray(data)) {
    if (depth === MAX_RANK) {
      throw new ShapeError(`bprop.tensor: the nested array is more than ${MAX_RANK} deep (the rank limit)`);
    }
    if (shape.length === depth) shape.push(data.length);
    else if (shape[depth] !== data.length) {
      throw new ValueError(`bprop.tensor: ragged nested array (length ${data.length} where ${shape[depth]} was expected)`);
    }
    for (const item of data) flatten(item, shape, depth + 1, out);
  } else {
    if (depth !== shape.length) throw new ValueError('bprop.tensor: ragged nested array');
    if (typeof data !== 'number' && typeof data !== 'boolean') {
      // A string or an object would silently become NaN in a typed array.
      throw new ValueError(`bprop.tensor: a tensor holds numbers or booleans, got a ${data === null ? 'null' : typeof data}`);
    }
    out.push(data);
  }
}

function nest(flat, shape) {
  if (shape.length === 0) return flat[0];
  const build = (offset, axis) => {
    const n = shape[axis];
    if (axis === shape.length - 1) return flat.slice(offset, offset + n);
    const stride = shape.slice(axis + 1).reduce((a, b) => a * b, 1);
    const out = [];
    for (let i = 0; i < n; ++i) out.push(build(offset + i * stride, axis + 1));
    return out;
  };
  return build(0, 0);
}

/** The error for a use of disposed tensor t: one a jitted function's trace ended says that it escaped. */
export function disposedError(t) {
  if (t !== undefined && t._traced) {
    return new ValueError(
      'bprop.jit: the tensor is a traced tensor of a jitted function that has finished tracing (it escaped the ' +
        'function, e.g. through a captured variable): return it from the function instead',
    );
  }
  return new ValueError('bprop: the tensor has been disposed');
}

/**
 * A tensor in the WebAssembly heap. Created by a Bprop instance; methods run ops on it. `_h` is the module's
 * integer handle (0 once disposed); `_s` the scope (an array) that disposes it, or null; `_fin` whether the
 * FinalizationRegistry watches it (only tensors outside every scope are registered: a scope frees the rest).
 */
export class Tensor {
  constructor(bp, handle) {
    this._bp = bp;
    this._h = handle;
    this._s = null;
    this._fin = false;
    bp._adopt(this);
  }
  get handle() {
    if (this._h === 0) throw disposedError(this);
    return this._h;
  }
  get isDisposed() {
    return this._h === 0;
  }
  get shape() {
    return this._bp._shape(this.handle);
  }
  get dtype() {
    return this._bp._dtype(this.handle);
  }
  get rank() {
    return this.shape.length;
  }
  get size() {
    return this.shape.reduce((a, b) => a * b, 1);
  }
  /**
   * A copy of the elements, once read: a Promise of a typed array (Float32Array, Float64Array, Int32Array, or
   * Uint8Array for bool; the values of a float16 / bfloat16 tensor as a Float32Array, exactly). Works for a tensor
   * on any device, including one whose memory is read only asynchronously (a GPU buffer); dataSync() is the
   * synchronous read of a tensor in the WebAssembly heap.
   */
  async data() {
    return this._bp._dataAsync(this.handle, (d, dtype) => (isHalf(dtype) ? halfBitsToFloat32(d, dtype) : d));
  }
  /**
   * data() now, for a tensor in the WebAssembly heap (a ValueError naming the device for one whose memory the
   * host cannot read synchronously: await data() there).
   */
  dataSync() {
    const d = this._bp._data(this.handle);
    return isHalf(this.dtype) ? halfBitsToFloat32(d, this.dtype) : d;
  }
  /** The stored bits of a float16 / bfloat16 tensor, a copy as a Uint16Array (a ValueError for other dtypes). */
  bits() {
    if (!isHalf(this.dtype)) {
      throw new ValueError(`Tensor.bits: a ${this.dtype} tensor has no 16-bit float bits (float16 and bfloat16 do)`);
    }
    return this._bp._data(this.handle);
  }
  /** The elements as nested arrays (booleans for bool tensors); a number for a 0-d tensor. */
  toArray() {
    const d = this.dataSync();
    const flat = this.dtype === 'bool' ? Array.from(d, (v) => v !== 0) : Array.from(d);
    return nest(flat, this.shape);
  }
  /** The only element of a one-element tensor. */
  item() {
    return this._bp._item(this.handle);
  }
  toString(maxElements = 64) {
    if (this._h === 0) return 'Tensor(disposed)';
    return this._bp._check(this._bp._mod.toString(this._h, maxElements));
  }
  /** A copy with its own storage and no autodiff history. */
  clone() {
    return this._bp._wrap(this._bp._check(this._bp._mod.clone(this.handle)));
  }
  /** Frees the tensor's memory now (idempotent). */
  dispose() {
    if (this._h !== 0) this._bp._release(this);
  }
  [Symbol.for('nodejs.util.inspect.custom')]() {
    return this.toString();
  }
}
if (typeof Symbol.dispose === 'symbol') {
  Tensor.prototype[Symbol.dispose] = function dispose() {
    this.dispose();
  };
}

/** A named tensor that grad can differentiate through `weights`; update it in place with assign(). */
export class Parameter extends Tensor {
  get name() {
    return this._bp._check(this._bp._mod.parameterInfo(this.handle)).name;
  }
  get requiresGrad() {
    return this._bp._check(this._bp._mod.parameterInfo(this.handle)).requiresGrad;
  }
  set requiresGrad(v) {
    this._bp._check(this._bp._mod.setRequiresGrad(this.handle, !!v));
  }
  /** Replaces the values in place (same shape; cast to this parameter's dtype). */
  assign(value) {
    const t = this._bp._asTensor(value, this);
    try {
      this._bp._check(this._bp._mod.parameterAssign(this.handle, t.handle));
    } finally {
      if (t !== value) t.dispose();
    }
    return this;
  }
}

/** Adds every tensor in v (a tensor, or arrays and plain objects of them) to the set `out`. */
export function collectTensors(v, out) {
  if (v instanceof Tensor) out.add(v);
  else if (Array.isArray(v)) for (const x of v) collectTensors(x, out);
  else if (isPlainObject(v)) for (const x of Object.values(v)) collectTensors(x, out);
}
