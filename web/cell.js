// The Parameter and Cell classes bound to one Bprop instance (bp.Parameter, bp.Cell): MindSpore's Parameter
// and nn.Cell, including a Cell's custom bprop.

import { ValueError } from './errors.js';
import { Parameter, Tensor } from './tensor.js';

export function makeParameterClass(bp) {
  /** new bp.Parameter(data, name, requiresGrad = true): a copy of data that grad can differentiate via weights. */
  return class BoundParameter extends Parameter {
    constructor(data, name = 'param', requiresGrad = true) {
      const src = bp._asTensor(data);
      // A parameter shares the storage it is made from: make it from a copy so updates never write into data.
      const copy = bp._check(bp._mod.clone(src.handle));
      if (src !== data) src.dispose();
      let handle;
      try {
        handle = bp._check(bp._mod.makeParameter(copy, name, requiresGrad));
      } finally {
        bp._mod._bp_release(copy);
      }
      super(bp, handle);
    }
  };
}

export function makeCellClass(bp) {
  /**
   * A module: subclass it and define construct(...inputs). Define bprop(...inputs, out, dout) too to replace
   * automatic differentiation of construct (MindSpore's Cell.bprop). Instances are callable: net(x).
   */
  class Cell {
    constructor() {
      const self = function cell(...inputs) {
        return self.call(...inputs);
      };
      delete self.name;
      delete self.length;
      Object.setPrototypeOf(self, new.target.prototype);
      return self;
    }
    construct() {
      throw new ValueError(`${this.constructor.name}: construct is not defined`);
    }
    call(...inputs) {
      // Graph mode (bp.setContext): a call with tensors only, outside any trace and grad level, runs through a jit
      // of the cell (made on first use), as the core's Cell does.
      if (bp._graphMode && inputs.every((x) => x instanceof Tensor) && bp._mod.graphModeCall()) {
        if (!this._graphCall) {
          const jitted = bp.jit((...xs) => this._eagerCall(xs));
          Object.defineProperty(this, '_graphCall', { value: jitted });  // (not enumerable: not a sub-cell)
        }
        return this._graphCall(...inputs);
      }
      return this._eagerCall(inputs);
    }
    _eagerCall(inputs) {
      // bp.amp.autoMixedPrecision: the call under its autocast scope, half outputs cast to float32.
      if (this._amp) return bp._ampRunCell(this._amp, () => this._call(inputs));
      return this._call(inputs);
    }
    _call(inputs) {
      const hasBprop = typeof this.bprop === 'function' && this.bprop !== Cell.prototype.bprop;
      if (!hasBprop) return this.construct(...inputs);
      const label = `${this.constructor.name}.bprop`;
      return bp._withArgs(inputs, (_, handles) => {
        const fwd = bp._callback((...xs) => this.construct(...xs));
        const bwd = bp._callback((...ts) => this.bprop(...ts), 'grads');
        return bp._wrap(bp._check(bp._mod.applyCustom(label, handles, fwd, bwd)));
      });
    }
    /** Parameters of this cell and its sub-cells (own properties, in definition order), as [path, parameter]. */
    parametersAndNames(prefix = '') {
      const out = [];
      for (const [key, v] of Object.entries(this)) {
        if (v instanceof Parameter) out.push([prefix + key, v]);
        else if (v instanceof Cell) out.push(...v.parametersAndNames(`${prefix}${key}.`));
      }
      return out;
    }
    /** Parameters with requiresGrad. */
    trainableParams() {
      return this.parametersAndNames()
        .map(([, p]) => p)
        .filter((p) => p.requiresGrad);
    }
  }
  return Cell;
}
