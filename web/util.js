// Small helpers the package's modules share (one definition each).

/** An object literal (prototype Object or null): an options object, not a tensor, array, class instance or cell. */
export function isPlainObject(v) {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** snake_case -> camelCase ("grad_position" -> "gradPosition"). */
export const camel = (name) => name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
