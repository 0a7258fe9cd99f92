#!/usr/bin/env node
// A stand-in for a build's `check --outcomes`, for testing the harness itself: every case is "ok" except
// that a case whose name contains "crash" kills the process (SIGSEGV), "untyped" ends as "other", and
// "disagree" ends as a 'value' error when run as build "b".
//   node fake-checker.mjs --as NAME --outcomes FILE...
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const as = args[args.indexOf('--as') + 1];
for (const file of args.filter((a, i) => a.startsWith('/') && args[i - 1] !== '--as')) {
  const { cases } = JSON.parse(readFileSync(file, 'utf8'));
  for (const c of cases) {
    if (c.name.includes('crash')) process.kill(process.pid, 'SIGSEGV');
    let line = { file, case: c.name, outcome: 'ok', shape: [], dtype: 'float32' };
    if (c.name.includes('untyped')) line = { file, case: c.name, outcome: 'other', message: 'std::out_of_range' };
    if (c.name.includes('disagree') && as === 'b') line = { file, case: c.name, outcome: 'value', message: 'For ...' };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  }
}
