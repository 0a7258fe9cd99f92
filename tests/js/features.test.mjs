// Feature detection before loading: an engine without WebAssembly SIMD or exception handling gets an error that
// names the feature and the versions that have it, instead of a CompileError.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { BpropError } from '../../web/errors.js';
import { checkFeatures, missingFeatures, REQUIRED_FEATURES } from '../../web/features.js';

test('this engine has every feature the module needs, and the probes are real modules', () => {
  assert.deepEqual(missingFeatures(), []);
  assert.doesNotThrow(() => checkFeatures());
  for (const f of REQUIRED_FEATURES) {
    const broken = f.module.slice();
    broken[broken.length - 3] = 0xff; // an opcode that does not exist: the probe must then fail to validate
    assert.equal(WebAssembly.validate(new Uint8Array(broken)), false, f.name);
  }
});

test('a missing feature is a BpropError naming it and where it is available', () => {
  const withoutSimd = (bytes) => !bytes.includes(253); // 0xfd: the SIMD opcode prefix
  assert.deepEqual(missingFeatures(withoutSimd).map((f) => f.name), ['WebAssembly SIMD (128-bit)']);
  assert.throws(
    () => checkFeatures(withoutSimd),
    (e) => e instanceof BpropError && /lacks WebAssembly SIMD \(128-bit\) \(Chrome 91, .*Safari 16\.4.* or newer\)/.test(e.message),
  );
  assert.throws(() => checkFeatures(() => false), /SIMD.*; WebAssembly exception handling \(Chrome 95/);
});
