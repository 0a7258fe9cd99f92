#!/usr/bin/env node
// Writes the op parts of web/index.d.ts from the op registry of the WebAssembly build: the OpName union (every
// registered op by its catalogue name and its camelCase alias) and the TensorOps interface (the op methods a
// tensor has). `--check` only says whether the file is current (exit status 1 when not); tests/js/op-types.test.mjs
// runs it. Run after adding an op: node tools/gen-op-types.mjs
import { readFileSync, writeFileSync } from 'node:fs';

import { init } from '../web/index.js';

const dtsUrl = new URL('../web/index.d.ts', import.meta.url);
const camel = (name) => name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

/** index.d.ts with its OpName and TensorOps blocks as the registry says. */
export async function generatedTypes(text) {
  const bp = await init();
  const names = [...bp.opNames()].sort();
  const keys = [...new Set(names.flatMap((n) => [n, camel(n)]))];
  const probe = bp.ones([1]);
  // (an op whose name a Tensor member already has, e.g. a getter, gets no method of that name)
  const methods = keys.filter((k) => typeof probe[k] === 'function' && probe[k].name.startsWith('opMethod'));
  probe.dispose();
  const union = `export type OpName =\n${keys.map((k) => `  | '${k}'`).join('\n')};`;
  const iface = `export interface TensorOps {\n${methods.map((k) => `  ${k}(...args: OpArg[]): Tensor;`).join('\n')}\n}`;
  const replaced = text.replace(/export type OpName =[^;]*;/, union).replace(/export interface TensorOps \{[^}]*\}/, iface);
  if (!/export type OpName =/.test(text) || !/export interface TensorOps \{/.test(text)) {
    throw new Error('web/index.d.ts lacks the OpName union or the TensorOps interface');
  }
  return replaced;
}

if (import.meta.url === new URL(process.argv[1], 'file:').href) {
  const text = readFileSync(dtsUrl, 'utf8');
  const want = await generatedTypes(text);
  if (process.argv.includes('--check')) {
    if (want !== text) {
      console.error('web/index.d.ts: the op types are not the registry\'s: run node tools/gen-op-types.mjs');
      process.exit(1);
    }
  } else if (want !== text) {
    writeFileSync(dtsUrl, want);
    console.log('web/index.d.ts: op types written');
  }
}
