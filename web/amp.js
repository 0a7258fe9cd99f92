// bp.amp: mixed precision, as MindSpore's amp (levels O0-O3, auto_mixed_precision, loss scalers) with PyTorch's
// autocast as a scope. The casts are the core's (bprop/amp.h): ops called inside a scope cast their inputs by the
// op's class, on the tape and in jit traces like any op, so gradients come back in the parameters' dtype.
//
//   const net = bp.amp.autoMixedPrecision(new Net(), 'O2', 'bfloat16');  // every call runs under autocast
//   const scaler = new bp.amp.DynamicLossScaler();                      // for float16
//   const step = new bp.nn.TrainOneStepWithLossScaleCell(new bp.nn.WithLossCell(net, lossFn), opt, scaler);
//   const [loss, overflow, scale] = step(x, y);
//
// docs/mixed-precision.md lists each level's ops and the reasons.

const LEVELS = ['O0', 'O1', 'O2', 'O3'];
const HALF = ['float16', 'bfloat16'];

import { nnCheck } from './nn.js';

/** Frees scalers whose JavaScript wrappers were collected. */
const nativeObjects =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((handle) => {
        if (!handle.isDeleted()) handle.delete();
      })
    : null;

function hidden(obj, key, value) {
  Object.defineProperty(obj, key, { value, writable: true, configurable: true, enumerable: false });
}

export function makeAmp(bp, { Tensor, Parameter }) {
  const mod = bp._mod;
  const check = (r) => nnCheck(bp, r);

  function checkLevel(who, level) {
    if (!LEVELS.includes(level)) {
      throw new bp.ValueError(`${who}: level must be one of ${LEVELS.join(', ')}, got ${String(level)}`);
    }
  }
  function checkDtype(who, dtype) {
    if (!HALF.includes(dtype)) throw new bp.DTypeError(`${who}: dtype must be float16 or bfloat16, got ${String(dtype)}`);
  }

  /** Runs fn() with ops casting their inputs as `level` says (torch.autocast as a function); returns fn's result. */
  function autocast(level, dtype, fn) {
    checkLevel('bp.amp.autocast', level);
    checkDtype('bp.amp.autocast', dtype);
    if (typeof fn !== 'function') throw new bp.ValueError('bp.amp.autocast: expected a function to run');
    check(mod.ampEnter(level, dtype));
    try {
      const r = fn();
      if (r && typeof r.then === 'function') {
        throw new bp.ValueError('bp.amp.autocast: the function returned a promise; the scope only covers synchronous code');
      }
      return r;
    } finally {
      check(mod.ampExit());
    }
  }

  /** { level, dtype } of the innermost open scope ('O0' when none). */
  function state() {
    return check(mod.ampState());
  }

  // Half tensors in a cell's result (a tensor or nested arrays) cast to float32: MindSpore's output cast.
  function outputsToFloat32(v) {
    if (v instanceof Tensor) {
      if (!HALF.includes(v.dtype)) return v;
      const f = v.cast('float32');
      v.dispose();
      return f;
    }
    if (Array.isArray(v)) return v.map(outputsToFloat32);
    return v;
  }

  /**
   * MindSpore's amp.auto_mixed_precision: every call of `cell` runs under autocast(level, dtype) and its half
   * outputs come back as float32. Parameters keep their dtype. 'O0' removes a previous setting. Returns the cell.
   */
  function autoMixedPrecision(cell, level = 'O2', dtype = 'float16') {
    if (!(cell instanceof bp.Cell)) throw new bp.ValueError('bp.amp.autoMixedPrecision: expected a cell');
    checkLevel('bp.amp.autoMixedPrecision', level);
    checkDtype('bp.amp.autoMixedPrecision', dtype);
    hidden(cell, '_amp', level === 'O0' ? null : { level, dtype });
    return cell;
  }

  /** Calls run() under the cell's mixed precision setting (bp.Cell's call). */
  function runCell(setting, run) {
    return outputsToFloat32(autocast(setting.level, setting.dtype, run));
  }

  /** A 0-d bool tensor: every element of every tensor is finite (the all_finite op); true for an empty list. */
  function allFinite(tensors) {
    const list = Array.from(tensors ?? []);
    // (the op needs one tensor at least; as amp::all_finite, nothing is finite)
    if (list.length === 0) return bp.ones([], { dtype: 'bool' });
    return bp.ops.all_finite(list);
  }

  /**
   * Scales the loss before the backward and unscales the gradients after; the scale is a 0-d float32 Parameter.
   * Use bp.amp.DynamicLossScaler or bp.amp.StaticLossScaler.
   */
  class LossScaler {
    constructor(kind, scaleValue, scaleFactor = 2, scaleWindow = 1000) {
      const handle = check(mod.ampMakeLossScaler(kind, scaleValue, scaleFactor, scaleWindow));
      hidden(this, '_native', handle);
      if (nativeObjects) nativeObjects.register(this, handle);
      const info = check(mod.ampScalerInfo(handle));
      hidden(this, '_scale', new Parameter(bp, info.scale));
      if (info.counter !== undefined) {
        hidden(this, '_counter', new Parameter(bp, info.counter));
        this.scaleFactor = info.scaleFactor;
        this.scaleWindow = info.scaleWindow;
      }
    }
    /** loss * scale. */
    scale(loss) {
      return bp._withArgs([loss], (_, [h]) => bp._wrap(check(mod.ampScalerScale(this._native, h))));
    }
    /** Each gradient times 1 / scale. */
    unscale(grads) {
      return bp._wrapValue(check(mod.ampScalerUnscale(this._native, grads.map((g) => g.handle))));
    }
    /** Updates the scale after a step whose unscaled gradients were `gradsFinite` (a 0-d bool tensor). */
    adjust(gradsFinite) {
      check(mod.ampScalerAdjust(this._native, gradsFinite.handle));
    }
    /** The scale, a 0-d float32 Parameter (shares the scaler's storage). */
    get scaleValue() {
      return this._scale;
    }
    /** The scale now, as a number. */
    get currentScale() {
      return this._scale.item();
    }
    /**
     * The state to save with a checkpoint (PyTorch's GradScaler.state_dict): { loss_scale } and, for a dynamic
     * scaler, loss_scale_finite_steps (finite steps since the scale last changed).
     */
    state() {
      return check(mod.ampScalerState(this._native));
    }
    /** Restores a state(); a ValueError naming the key for a missing, unknown or invalid entry (then nothing changes). */
    loadState(state) {
      if (state === null || typeof state !== 'object') throw new bp.ValueError('LossScaler.loadState: expected an object');
      check(mod.ampScalerLoadState(this._native, state));
    }
  }

  /** A fixed scale (MindSpore's StaticLossScaler); adjust does nothing. */
  class StaticLossScaler extends LossScaler {
    constructor(scaleValue) {
      super('static', scaleValue);
    }
  }

  /**
   * MindSpore's DynamicLossScaler: an overflow divides the scale by scaleFactor (not below 1); scaleWindow finite
   * steps in a row multiply it by scaleFactor.
   */
  class DynamicLossScaler extends LossScaler {
    constructor(scaleValue = 65536, scaleFactor = 2, scaleWindow = 1000) {
      super('dynamic', scaleValue, scaleFactor, scaleWindow);
    }
    /** Finite steps since the scale last changed (a 0-d float32 Parameter). */
    get counter() {
      return this._counter;
    }
  }

  /** [unscaled gradients, finite flag]: the scaled step's arithmetic. */
  function unscaleAndCheck(scaler, grads) {
    const [gs, finite] = check(mod.ampScalerUnscaleAndCheck(scaler._native, grads.map((g) => g.handle)));
    return [bp._wrapValue(gs), bp._wrap(finite)];
  }

  return {
    amp: { autocast, state, autoMixedPrecision, allFinite, LossScaler, StaticLossScaler, DynamicLossScaler,
      all_finite: allFinite, auto_mixed_precision: autoMixedPrecision },
    _ampRunCell: runCell,
    _ampUnscaleAndCheck: unscaleAndCheck,
  };
}
