// The automatic-differentiation part of the API object (bp.grad, bp.valueAndGrad, bp.vjp, bp.jvp, jacobians, the
// Hessian, bp.gradcheck, bp.noGrad, bp.exportGraph): methods of Bprop (web/index.js gives it this class's
// methods), each converting its arguments and calling the core with JavaScript functions as callbacks.

import { BpropError } from './errors.js';

export class AutodiffMethods {
  _gradFn(fn, options, withValue) {
    const { gradPosition = 0, weights = [], hasAux = false, sensParam = false, sens = null } = options;
    const cb = this._callback(fn);
    const eager = (...args) => {
      let s = sens;
      if (sensParam) s = args.pop();
      const weightHandles = weights.map((w) => w.handle);
      return this._withArgs(s === null || s === undefined ? args : [...args, s], (tensors, handles) => {
        const sensHandle = s === null || s === undefined ? null : handles.pop();
        const r = this._check(
          this._mod.gradCall(cb, gradPosition, weightHandles, hasAux, withValue, handles, sensHandle),
        );
        return this._wrapValue(r);
      });
    };
    // Graph mode (setContext): called outside any trace and grad level, the function runs through a jit of
    // itself (one graph per signature, made on first use), as the core's grad functions do.
    let jitted = null;
    return (...args) => {
      if (!this._graphMode || !this._mod.graphModeCall()) return eager(...args);
      jitted ??= this.jit(eager);
      return jitted(...args);
    };
  }
  /**
   * grad(fn, {gradPosition = 0 | [i, ...] | null, weights = [], hasAux = false, sensParam = false, sens}): a
   * function returning the gradients of fn's output (a tensor for an int position, an array for a list; with
   * weights, [positionGrads, weightGrads] or just weightGrads when gradPosition is null; with hasAux
   * [grads, aux...]). sensParam: the last argument is the cotangent of fn's output.
   */
  grad(fn, options = {}) {
    return this._gradFn(fn, options, false);
  }
  /** As grad, returning [value, grads]. */
  valueAndGrad(fn, options = {}) {
    return this._gradFn(fn, options, true);
  }
  /** [out, grads]: fn's output and v . d fn / d inputs (one gradient per input). */
  vjp(fn, inputs, v) {
    return this._withArgs([...inputs, v], (_, handles) => {
      const vh = handles.pop();
      return this._wrapValue(this._check(this._mod.vjp(this._callback(fn), handles, vh)));
    });
  }
  /**
   * The graph autodiff records for fn at inputs: forward ops, then each backward step (the bprop of one forward
   * op, the ops it ran, dout and the gradients it returned), as a "bprop-graph/1" object (docs/graph.md).
   */
  exportGraph(fn, inputs, { names = [], maxValues = 64 } = {}) {
    return this._withArgs(inputs, (_, handles) =>
      JSON.parse(this._check(this._mod.exportGraph(this._callback(fn), handles, names, maxValues))),
    );
  }
  /** [out, tangentOut]: fn's output and d fn / d inputs . tangents. */
  jvp(fn, inputs, tangents) {
    return this._withArgs([...inputs, ...tangents], (_, handles) =>
      this._wrapValue(
        this._check(this._mod.jvp(this._callback(fn), handles.slice(0, inputs.length), handles.slice(inputs.length))),
      ),
    );
  }
  _jacobian(kind, fn, argnum) {
    const cb = this._callback(fn);
    return (...args) =>
      this._withArgs(args, (_, handles) => this._wrap(this._check(this._mod.jacobian(kind, cb, argnum, handles))));
  }
  /** Jacobian of fn's output w.r.t. argument argnum (reverse mode), shaped out.shape + input.shape. */
  jacrev(fn, { argnum = 0 } = {}) {
    return this._jacobian('jacrev', fn, argnum);
  }
  /** Jacobian by forward mode. */
  jacfwd(fn, { argnum = 0 } = {}) {
    return this._jacobian('jacfwd', fn, argnum);
  }
  /** Hessian of a scalar fn w.r.t. argument argnum. */
  hessian(fn, { argnum = 0 } = {}) {
    return this._jacobian('hessian', fn, argnum);
  }
  /** Compares reverse-mode gradients with central finite differences (float64); order 2 checks the gradient's gradient. */
  gradcheck(fn, inputs, { eps = 1e-6, atol = 1e-5, rtol = 1e-3, order = 1 } = {}) {
    return this._withArgs(inputs, (_, handles) =>
      this._check(this._mod.gradcheck(this._callback(fn), handles, eps, atol, rtol, order === 2)),
    );
  }
  /** Runs fn with every open grad level suspended: nothing inside is differentiated. */
  noGrad(fn) {
    let result;
    let error = null;
    const ok = this._mod.noGrad(() => {
      try {
        result = fn();
        return true;
      } catch (e) {
        error = e;
        return undefined;
      }
    });
    if (ok === undefined) {
      this._mod.takeError();
      throw error ?? new BpropError('bprop.noGrad failed');
    }
    return result;
  }
}
