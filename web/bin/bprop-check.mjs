#!/usr/bin/env node
// bprop-check FILE...: runs gradient test vector files in the WebAssembly build and prints what the native
// `bprop check` prints: one line per failing case, then `N passed, N failed`.
// Exit status: 0 all passed, 1 a case failed, 2 a file is unreadable or malformed.
import { readFile } from 'node:fs/promises';

import { init } from '../index.js';

const usage =
  'usage: bprop-check [-v] FILE...\n' +
  'Runs every case of the vector files (format bprop-vectors/1, see docs/vectors.md). Prints one line\n' +
  "per failing case (FILE: CASE: the worst element or the error) and closes with 'N passed, N failed'.\n" +
  'With -v (--verbose) passing cases are listed too, error cases with the message they raised.\n' +
  'Exit status: 0 all passed, 1 a case failed, 2 a file is unreadable or malformed.\n';

const args = process.argv.slice(2);
if (args.length === 0 || args[0] === '--help' || args[0] === '-h') {
  (args.length === 0 ? process.stderr : process.stdout).write(usage);
  process.exit(args.length === 0 ? 2 : 0);
}
const verbose = args.includes('-v') || args.includes('--verbose');
const paths = args.filter((a) => a !== '-v' && a !== '--verbose');

const bp = await init();
let passed = 0;
let failed = 0;
let malformed = false;
const out = [];
for (const path of paths) {
  let text;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    out.push(`error: ${path}: cannot open the file`);
    malformed = true;
    continue;
  }
  const s = bp.runVectors(text, path);
  for (const e of s.errors) out.push(`error: ${e}`);
  malformed = malformed || s.errors.length > 0;
  for (const r of s.results) {
    if (!r.passed) out.push(`${path}: ${r.line}`);
    else if (verbose) out.push(`${path}: ${r.name}: passed${r.raised ? ` (raised: ${r.raised})` : ''}`);
  }
  passed += s.passed;
  failed += s.failed;
}
out.push(`${passed} passed, ${failed} failed`);
process.stdout.write(`${out.join('\n')}\n`);
process.exitCode = malformed ? 2 : failed > 0 ? 1 : 0;
