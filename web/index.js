// bprop for JavaScript: the WebAssembly build of the C++ core behind a small tensor and autodiff API.
//
//   import { init } from 'bprop';
//   const bp = await init();
//   const dcube = bp.grad((x) => x.mul(x).mul(x));
//   dcube(bp.tensor(2)).item();   // 12
//
// Tensors live in the WebAssembly heap. Free them with tensor.dispose(), `using`, bp.tidy(fn) or
// bp.scope(async fn); tensors made inside functions given to grad and friends are freed by the library.
// A FinalizationRegistry frees what is forgotten outside every scope, eventually.
//
// The module is reached in two ways: embind functions for everything with structured arguments, and plain
// WebAssembly exports (bindings/direct_ops.cpp) for the per-op path, where a tensor is an integer handle and
// an op call such as x.mul(2) is one call into the module.

import { makeAmp } from './amp.js';
import { AutodiffMethods } from './autodiff.js';
import { currentCallerFrame } from './callsite.js';
import { makeCellClass, makeParameterClass } from './cell.js';
import { makeCheckpoint } from './checkpoint.js';
import {
  BpropError, DTypeError, JS_CALLBACK_ERROR, MemoryError, moduleError, ShapeError, UnknownOpError, ValueError,
} from './errors.js';
import { installFmaKernel } from './fma-kernel.js';
import { checkFeatures } from './features.js';
import { GraphModeMethods } from './jit.js';
import { loadModule, loadOptions } from './loader.js';
import { makeNn } from './nn.js';
import {
  collectTensors,
  disposedError,
  dtypeOfTypedArray,
  flatten,
  isHalf,
  Parameter,
  Tensor,
  TYPED,
} from './tensor.js';
import { camel, isPlainObject } from './util.js';

export { BpropError, DTypeError, MemoryError, Parameter, ShapeError, Tensor, UnknownOpError, ValueError };

let defaultInstance = null;
let defaultOptions = null;

/**
 * Loads the WebAssembly module once and returns the API object (the same one on every call).
 * `options.wasmUrl` (where the binary is served, when not next to this file) or `options.wasmBinary` (its bytes)
 * apply to the first call; a later call may repeat them but not change them.
 */
export function init(options) {
  const opts = loadOptions(options);
  if (defaultInstance) {
    const same = (opts.wasmUrl === undefined || String(opts.wasmUrl) === String(defaultOptions.wasmUrl)) &&
      (opts.wasmBinary === undefined || opts.wasmBinary === defaultOptions.wasmBinary);
    if (!same) {
      return Promise.reject(new ValueError(
        'bprop.init: the module is already loaded with other options (give wasmUrl or wasmBinary on the first call)'));
    }
    return defaultInstance;
  }
  defaultOptions = opts;
  defaultInstance = Promise.resolve()
    .then(() => checkFeatures())
    .then(() => loadModule(opts))
    .then((mod) => new Bprop(mod));
  defaultInstance.catch(() => {
    defaultInstance = null;
  });
  return defaultInstance;
}

// ---- helpers -------------------------------------------------------------------------------------------

const snake = (name) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

// ---- the API object --------------------------------------------------------------------------------------

class Bprop {
  constructor(mod) {
    this._mod = mod;
    this._scopes = [];
    this._pendingError = null;
    this._finalizer =
      typeof FinalizationRegistry === 'function' ? new FinalizationRegistry((handle) => mod._bp_release(handle)) : null;
    // Jitted functions forgotten without dispose(): their graphs and callback are freed by id.
    this._jitFinalizer =
      typeof FinalizationRegistry === 'function' ? new FinalizationRegistry((id) => mod.jitRelease(id)) : null;
    this._dtypeNames = mod.dtypeNames();
    // Reads in flight (Tensor.data()): ticket -> the promise's settlers, completed by the module.
    this._reads = new Map();
    this._readTicket = 0;
    mod.bpReadDone = (ticket, h) => this._readDone(ticket, h);
    /** > 0 while a jitted function's JavaScript runs (tracing): ops then mark their graph nodes with the caller. */
    this._tracing = 0;
    this._traceWhere = '';
    /** setContext's mode is 'graph' (a process-wide setting of the module: read back from it). */
    this._graphMode = mod.getContext().mode === 'graph';
    /** The float32 GEMM kernel: 'relaxed-simd' (fused multiply-add) where the engine has it, else 'simd128'. */
    this.gemmKernel = installFmaKernel(mod);
    this._specs = new Map();
    this.ShapeError = ShapeError;
    this.DTypeError = DTypeError;
    this.ValueError = ValueError;
    this.UnknownOpError = UnknownOpError;
    this.MemoryError = MemoryError;
    this.BpropError = BpropError;
    this.Tensor = Tensor;
    this.ops = {};
    for (const name of this._check(mod.opNames())) this._defineOp(name);
    this.Parameter = makeParameterClass(this);
    this.Cell = makeCellClass(this);
    Object.assign(this, makeNn(this, { Tensor, Parameter }), makeCheckpoint(this, { Tensor, Parameter }));
    Object.assign(this, makeAmp(this, { Tensor, Parameter }));
  }

  // -- internals --

  _check(r) {
    if (r !== undefined) return r;
    return this._fail();
  }

  /** Throws the error the module recorded. */
  _fail() {
    const e = this._mod.takeError();
    if (e.kind === JS_CALLBACK_ERROR) {
      const err = this._pendingError ?? new BpropError('bprop: a callback failed');
      this._pendingError = null;
      throw err;
    }
    throw moduleError(e);
  }

  /** A new tensor joins the innermost scope; outside every scope (and parameters always) the finalizer. */
  _adopt(t) {
    const n = this._scopes.length;
    if (n !== 0 && !(t instanceof Parameter)) {
      const s = this._scopes[n - 1];
      s.push(t);
      t._s = s;
    } else {
      this._watch(t);
    }
  }

  _watch(t) {
    if (this._finalizer !== null && !t._fin) {
      this._finalizer.register(t, t._h, t);
      t._fin = true;
    }
  }

  _release(t) {
    if (t._fin) this._finalizer.unregister(t);
    this._mod._bp_release(t._h);
    t._h = 0;
    t._s = null;
    t._fin = false;
  }

  _wrap(handle) {
    return new Tensor(this, handle);
  }

  /** Wraps a handle a direct export returned (0: it failed). */
  _result(h) {
    if (h === 0) this._fail();
    return new Tensor(this, h);
  }

  /**
   * While tracing: tells the module the source location of the code calling the next op (the first stack frame
   * outside this package), which the graph shows (lower()) and names in errors at replay.
   */
  _locate() {
    const where = currentCallerFrame();
    if (where !== this._traceWhere) {
      this._traceWhere = where;
      this._mod.setTraceLocation(where);
    }
  }

  // The direct exports of the module (bindings/direct_ops.cpp): one WebAssembly call per op.
  _op1(id, a) {
    if (this._tracing) this._locate();
    const ha = a._h;
    if (ha === 0) throw disposedError(a);
    return this._result(this._mod._bp_op1(id, ha));
  }
  _op2(id, a, b) {
    if (this._tracing) this._locate();
    const ha = a._h;
    const hb = b._h;
    if (ha === 0 || hb === 0) throw disposedError(ha === 0 ? a : b);
    return this._result(this._mod._bp_op2(id, ha, hb));
  }
  /** op(a, v) for a number v (op(v, a) when scalarFirst is 1), v as a scalar like a. */
  _op2s(id, a, v, scalarFirst) {
    if (this._tracing) this._locate();
    const ha = a._h;
    if (ha === 0) throw disposedError(a);
    return this._result(this._mod._bp_op2s(id, ha, v, scalarFirst));
  }
  _item(h) {
    const v = this._mod._bp_item(h);
    if (v !== v && this._mod._bp_error_kind() >= 0) this._fail();
    return v;
  }
  _dtype(h) {
    const d = this._mod._bp_dtype(h);
    if (d < 0) this._fail();
    return this._dtypeNames[d];
  }
  _shape(h) {
    const p = this._mod._bp_shape(h);
    if (p === 0) this._fail();
    const heap = this._mod.HEAPF64;
    const i = p >> 3;
    const n = heap[i];
    const out = new Array(n);
    for (let k = 0; k < n; ++k) out[k] = heap[i + 1 + k];
    return out;
  }
  /** A copy of the elements (the typed array of the dtype; Uint8Array for bool). */
  _data(h) {
    const Typed = TYPED[this._dtype(h)];
    const n = this._shape(h).reduce((a, b) => a * b, 1);
    const p = this._mod._bp_data(h);
    if (p === 0) this._fail();
    const bytes = this._mod.HEAPU8.slice(p, p + n * Typed.BYTES_PER_ELEMENT);
    return new Typed(bytes.buffer);
  }
  /**
   * The elements, once read (a Promise): a heap tensor's at once, a device tensor's when the device has copied
   * them (bprop::read_async). `decode` turns the raw typed array into what the caller returns.
   */
  _dataAsync(h, decode) {
    return new Promise((resolve, reject) => {
      const ticket = ++this._readTicket;
      this._reads.set(ticket, { resolve, reject, decode });
      this._mod._bp_read_async(h, ticket);
    });
  }
  _readDone(ticket, h) {
    const read = this._reads.get(ticket);
    this._reads.delete(ticket);
    if (h === 0) {
      try {
        this._fail();
      } catch (e) {
        read.reject(e);
      }
      return;
    }
    try {
      read.resolve(read.decode(this._data(h), this._dtype(h)));
    } catch (e) {
      read.reject(e);
    } finally {
      this._mod._bp_release(h);
    }
  }
  /** A new handle to t's tensor, for the module to take. */
  _dup(t) {
    const h = this._mod._bp_dup(t.handle);
    if (h === 0) this._fail();
    return h;
  }

  /** Wraps what the module returned: a handle, null, or nested arrays of them. */
  _wrapValue(v) {
    if (v === null || v === undefined) return null;
    if (Array.isArray(v)) return v.map((x) => this._wrapValue(x));
    return this._wrap(v);
  }

  /** A tensor for a tensor argument: tensors as they are, numbers as scalars (like `like`'s dtype when float). */
  _asTensor(v, like) {
    if (v instanceof Tensor) {
      if (v._bp !== this) throw new ValueError('bprop: the tensor belongs to another bprop instance');
      return v;
    }
    if (typeof v === 'number' || typeof v === 'boolean') {
      if (typeof v === 'number' && like instanceof Tensor) {
        return this._wrap(this._check(this._mod.scalarLike(v, like.handle)));
      }
      return this.tensor(v);
    }
    if (Array.isArray(v) || ArrayBuffer.isView(v)) return this.tensor(v);
    throw new ValueError(`bprop: expected a tensor, got ${v === null ? 'null' : typeof v}`);
  }

  /** A scope is an array of the tensors made while it was the innermost one (each with `_s` pointing at it). */
  _openScope() {
    const s = [];
    // (a scope inside a jitted function's trace ends with the trace: its tensors are traced ones, see jit)
    const n = this._scopes.length;
    if (n !== 0 && this._scopes[n - 1].traced) s.traced = true;
    this._scopes.push(s);
    return s;
  }

  /**
   * Closes scope s: disposes what it still tracks except the tensors in `keep`, which move to the parent scope
   * (or, outside every scope, to the finalizer).
   */
  _closeScope(s, keep) {
    const scopes = this._scopes;
    if (scopes[scopes.length - 1] === s) scopes.pop();
    else {
      const i = scopes.lastIndexOf(s);
      if (i >= 0) scopes.splice(i, 1);
    }
    let kept = null;
    if (keep instanceof Tensor) kept = keep;
    else if (keep !== null && typeof keep === 'object') {
      kept = new Set();
      collectTensors(keep, kept);
    }
    const parent = scopes.length !== 0 ? scopes[scopes.length - 1] : null;
    for (let i = 0; i < s.length; ++i) {
      const t = s[i];
      if (t._s !== s || t._h === 0) continue; // taken out with keep(), or disposed already
      if (kept !== null && (kept === t || (kept instanceof Set && kept.has(t)))) {
        if (parent !== null) {
          parent.push(t);
          t._s = parent;
        } else {
          t._s = null;
          this._watch(t);
        }
      } else {
        this._release(t);
        if (s.traced) t._traced = true;  // (a later use says it escaped the trace)
      }
    }
    s.length = 0;
  }

  /**
   * A function the module can call with an array of tensor handles: runs fn on tensors in its own scope and
   * returns clones of the result's handles (the module releases them). Errors are kept for _check.
   */
  _callback(fn, convert = 'value') {
    return (handles, ...rest) => {
      const s = this._openScope();
      const made = [];
      let result;
      try {
        const args = handles.map((h) => (h === null || h === 0 ? null : this._wrap(h)));
        const extra = rest.map((h) => (h === null ? null : this._wrap(h)));  // (a primitive's unread out: null)
        const r = fn(...args, ...extra);
        result = convert === 'grads' ? this._toGradHandles(r, args.length, made) : this._toHandles(r, made);
      } catch (e) {
        for (const h of made) this._mod._bp_release(h);
        this._pendingError = e;
        result = undefined;
      } finally {
        this._closeScope(s, null);
      }
      return result;
    };
  }

  /**
   * New handles for what a callback returned (the module takes them); each is also pushed to `made`. Arrays may
   * nest 64 deep, as the module reads them (bindings.cpp to_value).
   */
  _toHandles(r, made, depth = 0) {
    let h;
    if (r instanceof Tensor) h = this._dup(r);
    else if (Array.isArray(r)) {
      if (depth === 64) throw new ValueError('bprop: the function returned arrays nested more than 64 deep');
      return r.map((x) => this._toHandles(x, made, depth + 1));
    }
    else if (typeof r === 'number') h = this._check(this._mod.scalar(r, 'float32'));
    else throw new ValueError('bprop: the function must return a tensor or an array of tensors');
    made.push(h);
    return h;
  }

  _toGradHandles(r, n, made) {
    const list = Array.isArray(r) ? r : [r];
    if (list.length !== n) {
      throw new ValueError(`bprop: bprop returned ${list.length} gradients for ${n} inputs`);
    }
    return list.map((g) => (g === null || g === undefined ? null : this._toHandles(g, made)));
  }

  /** Runs f(handles) with numbers among args converted to scalars, disposing those temporaries after. */
  _withArgs(args, f) {
    const temps = [];
    const tensors = args.map((a) => {
      if (a instanceof Tensor || a === null || a === undefined) return a ?? null;
      const t = this._asTensor(a);
      temps.push(t);
      return t;
    });
    try {
      return f(tensors, tensors.map((t) => (t === null ? null : t.handle)));
    } finally {
      for (const t of temps) t.dispose();
    }
  }

  /**
   * Defines bp.ops[name] and the tensor method. Calls with one or two tensors (or a tensor and a number) and
   * no attributes, the common case, go straight to the module's direct exports by op index; anything else
   * goes through _runOp. The module is loaded once per page (init), so the op indices are the same for every
   * tensor.
   */
  _defineOp(name) {
    const spec = this._check(this._mod.opSpec(name));
    this._specs.set(name, spec);
    const id = this._check(this._mod.opIndex(name));
    const bp = this;
    const arity = spec.variadic ? -1 : spec.inputs.length;
    let fn;
    let method;
    if (arity === 1) {
      fn = function op1(a) {
        if (arguments.length === 1 && a instanceof Tensor && a._bp === bp) return bp._op1(id, a);
        return bp._runOp(spec, Array.from(arguments));
      };
      method = function opMethod1() {
        if (arguments.length === 0) return this._bp._op1(id, this);
        return this._bp.ops[name](this, ...arguments);
      };
    } else if (arity === 2) {
      fn = function op2(a, b) {
        if (arguments.length === 2) {
          if (a instanceof Tensor && a._bp === bp) {
            if (b instanceof Tensor && b._bp === bp) return bp._op2(id, a, b);
            if (typeof b === 'number') return bp._op2s(id, a, b, 0);
          } else if (typeof a === 'number' && b instanceof Tensor && b._bp === bp) {
            return bp._op2s(id, b, a, 1);
          }
        }
        return bp._runOp(spec, Array.from(arguments));
      };
      method = function opMethod2(b) {
        if (arguments.length === 1) {
          const owner = this._bp;
          if (b instanceof Tensor && b._bp === owner) return owner._op2(id, this, b);
          if (typeof b === 'number') return owner._op2s(id, this, b, 0);
        }
        return this._bp.ops[name](this, ...arguments);
      };
    } else {
      fn = (...args) => bp._runOp(spec, args);
      method = function opMethod(...args) {
        return this._bp.ops[name](this, ...args);
      };
    }
    this.ops[name] = fn;
    if (camel(name) !== name) this.ops[camel(name)] = fn;
    for (const key of new Set([name, camel(name)])) {
      if (!(key in Tensor.prototype)) Object.defineProperty(Tensor.prototype, key, { value: method, writable: true });
    }
  }

  /** Splits op arguments into tensor inputs and attributes: see bp.ops. */
  _runOp(spec, args) {
    let options = {};
    if (args.length && isPlainObject(args[args.length - 1])) options = args.pop();
    const inputs = [];
    const attrs = {};
    let rest;
    if (spec.variadic) {
      if (!Array.isArray(args[0])) {
        throw new ValueError(`For '${spec.name}', the first argument must be an array of tensors`);
      }
      inputs.push(...args[0]);
      rest = args.slice(1);
    } else {
      const n = spec.inputs.length;
      inputs.push(...args.slice(0, n));
      rest = args.slice(n);
    }
    if (rest.length > spec.attrs.length) {
      throw new ValueError(`For '${spec.name}', too many arguments (${args.length})`);
    }
    rest.forEach((v, i) => {
      attrs[spec.attrs[i].name] = v;
    });
    for (const [key, v] of Object.entries(options)) {
      const k = snake(key);
      const inputIndex = spec.variadic ? -1 : spec.inputs.findIndex((s) => s.name === k);
      if (inputIndex >= 0) {
        while (inputs.length <= inputIndex) inputs.push(null);
        inputs[inputIndex] = v;
      } else {
        attrs[k] = v;
      }
    }
    const like = inputs.find((t) => t instanceof Tensor);
    const temps = [];
    const handles = inputs.map((v) => {
      if (v === null || v === undefined) return null;
      if (v instanceof Tensor) return v.handle;
      const t = this._asTensor(v, like);
      temps.push(t);
      return t.handle;
    });
    try {
      if (this._tracing) this._locate();
      return this._wrap(this._check(this._mod.callOp(spec.name, handles, attrs)));
    } finally {
      for (const t of temps) t.dispose();
    }
  }

  // -- tensors --

  /**
   * A tensor from a number, boolean, nested array or typed array. Options: shape (default: the nesting, or
   * 1-D for typed arrays), dtype (default: the typed array's type, bool for booleans, else float32).
   */
  tensor(data, options = {}) {
    if (data instanceof Tensor) return data.clone();
    let { shape, dtype } = options;
    let flat;
    if (ArrayBuffer.isView(data)) {
      flat = data;
      dtype = dtype ?? dtypeOfTypedArray(data);
      shape = shape ?? [data.length];
    } else {
      const s = [];
      const out = [];
      flatten(data, s, 0, out);
      flat = out;
      dtype = dtype ?? (out.length > 0 && out.every((v) => typeof v === 'boolean') ? 'bool' : 'float32');
      shape = shape ?? s;
    }
    const Typed = TYPED[dtype];
    if (!Typed) {
      throw new ValueError(
        `bprop.tensor: unknown dtype '${dtype}' (float32, float64, float16, bfloat16, int32 or bool)`,
      );
    }
    const numel = shape.reduce((a, b) => a * b, 1);
    if (flat.length !== numel) {
      throw new ValueError(`bprop.tensor: got ${flat.length} values for shape (${shape.join(', ')})`);
    }
    if (isHalf(dtype) && !(flat instanceof Uint16Array)) {
      // numbers (or a Float32Array / Float64Array): converted by the module, rounded once to nearest even
      const wide = Float64Array.from(flat, (v) => (typeof v === 'boolean' ? Number(v) : v));
      const bytes = new Uint8Array(wide.buffer);
      return this._wrap(this._check(this._mod.fromNumbers(bytes, shape, dtype)));
    }
    const typed =
      flat instanceof Typed && dtype !== 'bool'
        ? flat
        : Typed.from(flat, (v) => (typeof v === 'boolean' ? Number(v) : dtype === 'bool' ? Number(v !== 0) : v));
    const bytes = new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);
    return this._wrap(this._check(this._mod.fromBytes(bytes, shape, dtype)));
  }
  scalar(value, dtype = 'float32') {
    return this._wrap(this._check(this._mod.scalar(value, dtype)));
  }
  full(shape, value, { dtype = 'float32' } = {}) {
    return this._wrap(this._check(this._mod.full(shape, value, dtype)));
  }
  zeros(shape, options = {}) {
    return this.full(shape, 0, options);
  }
  ones(shape, options = {}) {
    return this.full(shape, 1, options);
  }
  zerosLike(t) {
    return this.full(t.shape, 0, { dtype: t.dtype });
  }
  onesLike(t) {
    return this.full(t.shape, 1, { dtype: t.dtype });
  }
  /** arange(stop) or arange(start, stop, step = 1), [start, stop). */
  arange(start, stop, step = 1, { dtype = 'float32' } = {}) {
    if (isPlainObject(stop)) return this.arange(0, start, 1, stop);
    if (stop === undefined) [start, stop] = [0, start];
    if (isPlainObject(step)) return this.arange(start, stop, 1, step);
    return this._wrap(this._check(this._mod.arange(start, stop, step, dtype)));
  }
  linspace(start, stop, num, { dtype = 'float32' } = {}) {
    return this._wrap(this._check(this._mod.linspace(start, stop, num, dtype)));
  }
  eye(n, { dtype = 'float32' } = {}) {
    return this._wrap(this._check(this._mod.eye(n, dtype)));
  }
  /** Standard normal numbers from `seed` (the same on every platform). */
  randn(shape, options = {}) {
    const { seed = 0, dtype = 'float32' } = typeof options === 'number' ? { seed: options } : options;
    return this._wrap(this._check(this._mod.randn(shape, seed, dtype)));
  }
  /** Uniform numbers in [low, high) from `seed`. */
  rand(shape, options = {}) {
    const { seed = 0, low = 0, high = 1, dtype = 'float32' } = typeof options === 'number' ? { seed: options } : options;
    return this._wrap(this._check(this._mod.rand(shape, seed, low, high, dtype)));
  }

  /** Runs a registered op by name: inputs (tensors, null for an omitted optional one), attributes (camelCase or snake_case). */
  callOp(name, inputs, attrs = {}) {
    const snakeAttrs = {};
    for (const [k, v] of Object.entries(attrs)) snakeAttrs[snake(k)] = v;
    if (this._tracing) this._locate();
    return this._withArgs(inputs, (_, handles) => this._wrap(this._check(this._mod.callOp(name, handles, snakeAttrs))));
  }
  /** The names of every registered op. */
  opNames() {
    return this._check(this._mod.opNames());
  }
  stopGradient(x) {
    return this.ops.stop_gradient(x);
  }

  /**
   * Runs a gradient test vector file (its JSON text) through the core's vector runner, the one `bprop check`
   * uses: {errors, passed, failed, results: [{name, passed, line, raised}]}.
   */
  runVectors(text, path = '<vectors>', { jit = false } = {}) {
    return this._check(this._mod.runVectors(text, path, !!jit));
  }
  /**
   * What every value case of a vector file computes, eagerly or (jit: true) traced with bp.jit and replayed, before
   * any comparison: {errors, cases: [{name, value, grads, second} | {name, error}]}, the tensors new (owned like
   * op results). `bprop check --jit` and the tests compare the two runs bit for bit.
   */
  computeVectors(text, path = '<vectors>', { jit = false } = {}) {
    const r = this._check(this._mod.computeVectors(text, path, !!jit));
    return {
      errors: r.errors,
      cases: r.cases.map((c) =>
        c.error !== undefined
          ? { name: c.name, error: c.error }
          : { name: c.name, value: this._wrap(c.value), grads: this._wrapValue(c.grads), second: this._wrapValue(c.second) },
      ),
    };
  }
  /**
   * Runs every case of a vector file without comparing to its expectations (the fuzzer's outcomes mode):
   * {errors, cases: [{name, outcome, shape, dtype} | {name, outcome, message}]}, outcome being 'ok', an error
   * kind ('shape', 'dtype', 'value', 'unknown_op', 'memory') or 'other'.
   */
  vectorOutcomes(text, path = '<vectors>') {
    return this._check(this._mod.vectorOutcomes(text, path));
  }

  // -- memory --

  /** Live tensor buffers in the WebAssembly heap and their bytes. */
  memory() {
    return this._mod.memory();
  }
  /** Runs fn; disposes every tensor made inside except those in its result (which move to the enclosing scope). */
  tidy(fn) {
    const s = this._openScope();
    let r;
    try {
      r = fn();
      if (r && typeof r.then === 'function') {
        throw new ValueError('bprop.tidy: the function returned a promise; use bprop.scope for async functions');
      }
    } finally {
      this._closeScope(s, r);
    }
    return r;
  }
  /**
   * Like tidy for async functions: tensors made while the scope is the innermost open one are disposed when the
   * promise settles, except those in its result. Concurrent scopes share the innermost one while awaiting.
   */
  async scope(fn) {
    const s = this._openScope();
    let r;
    try {
      r = await fn();
    } finally {
      this._closeScope(s, r);
    }
    return r;
  }
  /** Takes a tensor out of the scope it is tracked by (it then lives until disposed). */
  keep(t) {
    if (t instanceof Tensor && t._s !== null && t._h !== 0) {
      t._s = null;
      this._watch(t);
    }
    return t;
  }

  // -- custom backward operators --

  /**
   * Registers a primitive: forward(...typedArrays, info) returns the output elements (typed array or array);
   * inferShape(...shapes) and inferDtype(...dtypes) default to the first input's; bprop(...inputs, out, dout)
   * returns one gradient per input (null for none), written with ops so it differentiates again. readsOut: false
   * promises that bprop never reads out (it gets null): a recorded call then does not keep its output alive.
   */
  registerPrimitive({ name, inputs = ['x'], inferShape, inferDtype, forward, bprop, readsOut = true }) {
    if (typeof name !== 'string' || !name) throw new ValueError('registerPrimitive: a name is required');
    if (typeof forward !== 'function') throw new ValueError(`registerPrimitive '${name}': forward is required`);
    if (typeof bprop !== 'function') throw new ValueError(`registerPrimitive '${name}': bprop is required`);
    if (typeof readsOut !== 'boolean') {
      throw new ValueError(`registerPrimitive '${name}': readsOut must be true or false, got ${String(readsOut)}`);
    }
    const inputNames = typeof inputs === 'number' ? Array.from({ length: inputs }, (_, i) => `x${i}`) : inputs;
    const guard = (f) => (...a) => {
      try {
        return f(...a);
      } catch (e) {
        this._pendingError = e;
        return undefined;
      }
    };
    const shapeFn = guard((shapes) => (inferShape ? inferShape(...shapes) : shapes[0]));
    const dtypeFn = guard((dtypes) => (inferDtype ? inferDtype(...dtypes) : dtypes[0]));
    const forwardFn = guard((arrays, shapes, dtypes, outShape, outDtype) =>
      forward(...arrays, { shapes, dtypes, outShape, outDtype }),
    );
    const bpropFn = this._callback((...ts) => bprop(...ts), 'grads');
    this._check(this._mod.registerPrimitive(name, inputNames, shapeFn, dtypeFn, forwardFn, bpropFn, readsOut));
    this._defineOp(name);
  }
}

// The API's autodiff and graph-mode methods, written in files of their own (web/autodiff.js, web/jit.js).
for (const methods of [AutodiffMethods, GraphModeMethods]) {
  for (const name of Object.getOwnPropertyNames(methods.prototype)) {
    if (name === 'constructor') continue;
    Object.defineProperty(Bprop.prototype, name, Object.getOwnPropertyDescriptor(methods.prototype, name));
  }
}
