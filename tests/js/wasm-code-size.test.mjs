// tools/wasm-code-size.mjs reads a module's function bodies, names and data right: checked on a module built here
// byte by byte (an imported function first, so the names' indices are offset by the imports).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { groupSizes, readModule } from '../../tools/wasm-code-size.mjs';

const str = (s) => [s.length, ...Buffer.from(s)];
const section = (id, bytes) => [id, bytes.length, ...bytes];

function moduleBytes({ names = true } = {}) {
  const nameSection = [...str('name'), ...section(1, [3, 0, ...str('env.f'), 1, ...str('bprop::cpu::add_kernel'),
    2, ...str('std::__2::vector<int>::push_back')])];
  return Buffer.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 0, 0]),                           // one type: () -> ()
    ...section(2, [1, ...str('env'), ...str('f'), 0x00, 0]),  // an imported function
    ...section(3, [2, 0, 0]),                                 // two functions
    ...section(10, [2, 4, 0x00, 0x01, 0x01, 0x0b, 2, 0x00, 0x0b]),  // (nop nop) and ()
    ...section(11, [1, 0x00, 0x41, 0x00, 0x0b, 3, 0x61, 0x62, 0x63]),
    ...(names ? section(0, nameSection) : []),
  ]);
}

test('wasm-code-size: function bodies carry their names past the imports, data is counted', () => {
  const { functions, data } = readModule(moduleBytes());
  assert.deepEqual(functions.map((f) => [f.name, f.body.length]),
    [['bprop::cpu::add_kernel', 4], ['std::__2::vector<int>::push_back', 2]]);
  assert.equal(data.reduce((s, d) => s + d.length, 0), 9);
  const sizes = groupSizes(moduleBytes());
  const raw = Object.fromEntries(sizes.groups.map((g) => [g.name, g.raw]));
  assert.equal(raw.kernels, 4);
  assert.equal(raw['C/C++ runtime'], 2);
  assert.equal(sizes.code.raw, 6);
  assert.equal(sizes.required.raw, 6);
});

test('wasm-code-size: a module without names is refused with what to do', () => {
  assert.throws(() => readModule(moduleBytes({ names: false })), /--profiling-funcs/);
});
