// The op catalogue the generator draws from, read from the native program (`bprop ops --json`): every
// registered op with its inputs, whether they come as one list, and its attribute schema. Reading it rather
// than keeping a copy here means a new op or attribute is fuzzed as soon as it is registered.
import { execFileSync } from 'node:child_process';

/** [{name, family, noGrad, inputs: [{name, optional}], variadic, attrs: [{name, kind, required, default, choices}]}] */
export function readCatalogue(nativeBin) {
  const rows = JSON.parse(execFileSync(nativeBin, ['ops', '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 }));
  if (!rows.every((r) => Array.isArray(r.inputs) && Array.isArray(r.attrs))) {
    throw new Error(`${nativeBin} ops --json gives no op signatures (inputs, attrs): rebuild it`);
  }
  return rows.map((r) => ({
    name: r.op,
    family: r.family,
    noGrad: r.grad === 'no grad',
    inputs: r.inputs,
    variadic: r.variadic,
    attrs: r.attrs,
  }));
}
