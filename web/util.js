// Small helpers the package's modules share (one definition each).

import { ValueError } from './errors.js';

/** An object literal (prototype Object or null): an options object, not a tensor, array, class instance or cell. */
export function isPlainObject(v) {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** snake_case -> camelCase ("grad_position" -> "gradPosition"). */
export const camel = (name) => name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

/**
 * The function the module keeps for a JavaScript callback it may call later (a jitted function's, a cell's that
 * a core training cell runs): it calls target.callback through a WeakRef, so that the module (a garbage-collection
 * root) does not keep the target alive; the object the callback belongs to holds the target, and lives as long
 * as the module can call it. `gone` is the message should the target have been collected. Made here, apart, so
 * that its closure holds nothing else.
 */
export function weakCallback(bp, target, gone) {
  // (no closure here may name `target`: closures of one function share its captured variables)
  if (typeof WeakRef !== 'function') return target.callback;
  const ref = new WeakRef(target);
  return (...args) => {
    const t = ref.deref();
    if (t !== undefined) return t.callback(...args);
    bp._pendingError = new ValueError(gone);
    return undefined;
  };
}
