// The errors bprop throws: one class per kind of the C++ core's exceptions (core/include/bprop/errors.h).

/** Base class of every error raised by bprop; `kind` is "shape", "dtype", "value", "unknown_op" or "internal". */
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

/** The classes a core error of each kind becomes, matched by `kind`. */
export const ERROR_CLASSES = [ShapeError, DTypeError, ValueError, UnknownOpError];
