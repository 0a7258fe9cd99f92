// Graph mode in the API object: bp.jit, and bp.setContext / bp.getContext (MindSpore's execution context), methods
// of Bprop (web/index.js gives it this class's methods).

import { ValueError } from './errors.js';
import { isPlainObject, weakCallback } from './util.js';

/** bp.jit's options, checked: {optimize, fuse, staticArgnums, warnAfterTraces, maxTraces} (absent: the default). */
function jitOptions(options) {
  if (!isPlainObject(options)) throw new ValueError('bprop.jit: the options must be an object');
  const out = {};
  const count = (key, v, min) => {
    if (!Number.isInteger(v) || v < min) {
      throw new ValueError(`bprop.jit: '${key}' must be an integer >= ${min}, got ${String(v)}`);
    }
    return v;
  };
  for (const [key, v] of Object.entries(options)) {
    if (v === undefined) continue;
    if (key === 'optimize' || key === 'fuse') {
      if (typeof v !== 'boolean') throw new ValueError(`bprop.jit: '${key}' must be a boolean, got ${typeof v}`);
      out[key] = v;
    } else if (key === 'staticArgnums') {
      const list = typeof v === 'number' ? [v] : v;
      if (!Array.isArray(list)) throw new ValueError("bprop.jit: 'staticArgnums' must be an integer or a list of them");
      out.staticArgnums = list.map((i) => count('staticArgnums', i, 0));
    } else if (key === 'warnAfterTraces' || key === 'maxTraces') {
      out[key] = count(key, v, 0);
    } else {
      throw new ValueError(
        `bprop.jit: unknown option '${key}' (optimize, fuse, staticArgnums, warnAfterTraces, maxTraces)`,
      );
    }
  }
  return out;
}

/**
 * True when fn's source shows a fixed parameter list: no rest or default parameters and no use of `arguments`
 * (so fn.length is all it takes). False when the source does not say (native or bound functions, classes).
 */
function fixedParameters(fn) {
  const src = Function.prototype.toString.call(fn);
  if (/\{\s*\[native code\]\s*\}\s*$/.test(src) || /^class\b/.test(src)) return false;
  const open = src.indexOf('(');
  const arrow = src.indexOf('=>');
  let params;
  if (arrow >= 0 && (open < 0 || open > arrow)) params = src.slice(0, arrow); // x => ...
  else {
    if (open < 0) return false;
    let depth = 0;
    let close = -1;
    for (let i = open; i < src.length; ++i) {
      if (src[i] === '(') depth++;
      else if (src[i] === ')' && --depth === 0) {
        close = i;
        break;
      }
    }
    if (close < 0) return false;
    params = src.slice(open + 1, close);
  }
  return !params.includes('...') && !params.includes('=') && !/\barguments\b/.test(src);
}

export class GraphModeMethods {
  /**
   * setContext({ mode: 'graph' | 'pynative', device }): MindSpore's set_context, as the core's. In graph mode the
   * functions grad and valueAndGrad return, and Cells called with tensors, compile themselves with jit on their
   * first call outside any trace or grad level (one graph per signature); 'pynative', the default, runs them op
   * by op. `device` ('cpu', or a device this build has) is where new tensors and ops without device inputs go.
   * A field left out keeps its value.
   */
  setContext({ mode, device } = {}) {
    for (const [key, v] of [['mode', mode], ['device', device]]) {
      if (v !== undefined && typeof v !== 'string') {
        throw new ValueError(`bprop.setContext: ${key} must be a string, got ${v === null ? 'null' : typeof v}`);
      }
    }
    this._check(this._mod.setContext(mode ?? '', device ?? ''));
    this._graphMode = this.getContext().mode === 'graph';
  }
  /** { mode: 'graph' | 'pynative', device: 'cpu' | ... }: the context setContext set. */
  getContext() {
    return this._check(this._mod.getContext());
  }

  /**
   * jit(fn): a function called like fn that traces fn once per signature (the shapes and dtypes of its tensor
   * arguments) into a graph, the backward operators of any grad / valueAndGrad inside it included, and replays
   * that graph on later calls: one call into the module per call (docs/jit.md). While tracing, tensors have a
   * shape and a dtype and no values (item(), data(), toArray() are a ValueError), Parameters stay live inputs and
   * other tensors fn captures are constants. Under an open grad level (bp.grad(bp.jit(f))) a call is one op whose
   * backward is a jitted vjp of fn (or, where that cannot be exact, fn runs eagerly).
   * The function has lower(...args) (the graph as text), stats() ({traces, replays, eagerCalls, nodes, ...}) and
   * dispose() (frees the graphs; a forgotten one is freed by the garbage collector). Options: optimize, fuse,
   * staticArgnums, warnAfterTraces, maxTraces (the core's JitOptions).
   */
  jit(fn, options = {}) {
    if (typeof fn !== 'function') {
      throw new ValueError(`bprop.jit: expected a function, got ${fn === null ? 'null' : typeof fn}`);
    }
    const opts = jitOptions(options);
    const bp = this;
    const mod = this._mod;
    // The declared parameters: fewer arguments than these is an error (a missing tensor), not a new signature.
    // (Only a plain function's own `length`: a cell is a function whose `length` may mean something else.)
    const arity = Object.prototype.hasOwnProperty.call(fn, 'length') && !(fn instanceof this.Cell) ? fn.length : 0;
    // More arguments than a function declares would be ignored by it: an error, unless it can take them (rest or
    // default parameters, `arguments`, or a source that does not say).
    const maxArity = arity > 0 && fixedParameters(fn) ? arity : Infinity;
    const name = fn.name || 'the function';
    // The module holds only a weak path to fn (weakCallback): fn often closes over the jitted function itself
    // (they are made in one scope), and a strong one would keep both alive for ever.
    // (while fn runs for a trace, ops mark their nodes with the caller's source location)
    const marked = (...a) => {
      // The scope the module's callback opened for this call: while tracing, what it disposes are traced tensors.
      const scope = bp._scopes[bp._scopes.length - 1];
      if (scope !== undefined) scope.traced = mod.tracing();
      bp._tracing++;
      try {
        return fn(...a);
      } finally {
        if (--bp._tracing === 0) bp._traceWhere = '';
      }
    };
    const target = { callback: this._callback(marked) };
    const callback = weakCallback(this, target, 'bprop.jit: the jitted function has been collected');
    let id = this._check(mod.jitCreate(callback, opts));
    const live = () => {
      if (id === 0) throw new ValueError('bprop.jit: the jitted function has been disposed');
      return id;
    };
    const run = (what, args, f) => {
      const jitId = live();
      if (args.length < arity || args.length > maxArity) {
        throw new ValueError(
          `bprop.jit: ${name} takes ${arity} argument${arity === 1 ? '' : 's'}, ${what} got ${args.length}`,
        );
      }
      return bp._withArgs(args, (_, handles) => f(jitId, handles));
    };
    const jitted = function jitted(...args) {
      return run('the call', args, (jitId, handles) => bp._wrapValue(bp._check(mod.jitCall(jitId, handles))));
    };
    Object.defineProperties(jitted, {
      /** The graph for these arguments' signature as text (traced now if it was not). */
      lower: { value: (...args) => run('lower()', args, (jitId, handles) => bp._check(mod.jitLower(jitId, handles))) },
      /** The same graph as data (format bprop-jit-graph/1, docs/graph.md): nodes, fused groups, updates. */
      exportGraph: {
        value: (...args) =>
          run('exportGraph()', args, (jitId, handles) => JSON.parse(bp._check(mod.jitExportGraph(jitId, handles)))),
      },
      /** {traces, replays, eagerCalls, gradCalls, nodes, kernels, ..., passes}: the core's JitStats. */
      stats: { value: () => bp._check(mod.jitStats(live())) },
      /** Frees the graphs and the traced function's callback now (idempotent); later calls are a ValueError. */
      dispose: {
        value: () => {
          if (id === 0) return;
          if (bp._jitFinalizer !== null) bp._jitFinalizer.unregister(jitted);
          const gone = id;
          id = 0;
          bp._check(mod.jitRelease(gone));
        },
      },
      isDisposed: { get: () => id === 0 },
    });
    // (the callback lives as long as the function: the module reaches it only through a WeakRef)
    Object.defineProperty(jitted, '_target', { value: target });
    if (typeof Symbol.dispose === 'symbol') Object.defineProperty(jitted, Symbol.dispose, { value: jitted.dispose });
    if (this._jitFinalizer !== null) this._jitFinalizer.register(jitted, id, jitted);
    return jitted;
  }
}
