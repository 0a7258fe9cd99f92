// The errors bprop throws: one class per kind of the C++ core's exceptions (core/include/bprop/errors.h).

/**
 * Base class of every error raised by bprop; `kind` is "shape", "dtype", "value", "unknown_op", "memory" or
 * "internal".
 */
export class BpropError extends Error {
  constructor(message, kind = 'internal') {
    super(message);
    this.name = 'BpropError';
    this.kind = kind;
  }
}
export class ShapeError extends BpropError {
  constructor(message) {
    super(message, 'shape');
    this.name = 'ShapeError';
  }
}
export class DTypeError extends BpropError {
  constructor(message) {
    super(message, 'dtype');
    this.name = 'DTypeError';
  }
}
export class ValueError extends BpropError {
  constructor(message) {
    super(message, 'value');
    this.name = 'ValueError';
  }
}
export class UnknownOpError extends BpropError {
  constructor(message) {
    super(message, 'unknown_op');
    this.name = 'UnknownOpError';
  }
}

/**
 * An allocation failed or would pass the build's size limits (the WebAssembly heap has a hard ceiling); the
 * message names the op, the shape and the bytes. The module stays usable: the next op works.
 */
export class MemoryError extends BpropError {
  constructor(message) {
    super(message, 'memory');
    this.name = 'MemoryError';
  }
}

/** The classes a core error of each kind becomes, indexed by the module's kind number (bindings/guard.h). */
export const ERROR_CLASSES = [ShapeError, DTypeError, ValueError, UnknownOpError, MemoryError];
/** The error of the module's recorded { kind, message } (a BpropError for kinds without a class of their own). */
export function moduleError({ kind, message }) {
  const Cls = ERROR_CLASSES[kind];
  return Cls ? new Cls(message) : new BpropError(message);
}
/** The module's kind number for "a JavaScript callback threw" (its error waits on the JavaScript side). */
export const JS_CALLBACK_ERROR = 6;
