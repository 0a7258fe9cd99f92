// The WebAssembly features the module is built with, checked before loading it: an engine without one gets an
// error that names the feature and the versions that have it, instead of a CompileError about an opcode.

import { BpropError } from './errors.js';

/** Each feature as the smallest module that uses it (valid exactly where the engine has the feature). */
export const REQUIRED_FEATURES = [
  {
    name: 'WebAssembly SIMD (128-bit)',
    // (func (result v128) (i8x16.popcnt (i8x16.splat (i32.const 0))))
    module: [0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11],
    since: 'Chrome 91, Edge 91, Firefox 89, Safari 16.4, Node 16.4',
  },
  {
    name: 'WebAssembly exception handling',
    // (func (try (do) (catch_all)))
    module: [0, 97, 115, 109, 1, 0, 0, 0, 1, 4, 1, 96, 0, 0, 3, 2, 1, 0, 10, 8, 1, 6, 0, 6, 64, 25, 11, 11],
    since: 'Chrome 95, Edge 95, Firefox 100, Safari 15.2, Node 17',
  },
];

/** The required features `validate` (WebAssembly.validate by default) does not accept. */
export function missingFeatures(validate = (bytes) => WebAssembly.validate(bytes)) {
  return REQUIRED_FEATURES.filter((f) => !validate(new Uint8Array(f.module)));
}

/** Throws a BpropError naming every missing feature and where it is available; returns when none is missing. */
export function checkFeatures(validate) {
  if (typeof WebAssembly !== 'object') {
    throw new BpropError('bprop: this engine has no WebAssembly; bprop needs WebAssembly with SIMD and exceptions');
  }
  const missing = missingFeatures(validate);
  if (missing.length > 0) {
    const list = missing.map((f) => `${f.name} (${f.since} or newer)`).join('; ');
    throw new BpropError(`bprop: this engine lacks ${list}, which the bprop module is built with`);
  }
}
