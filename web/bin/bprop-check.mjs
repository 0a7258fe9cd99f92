#!/usr/bin/env node
// bprop-check [-v] [--jit] FILE...: runs gradient test vector files in the WebAssembly build and prints what the
// native `bprop check` prints: one line per failing case, then `N passed, N failed`. With --jit every case runs
// through bp.jit (its program and gradient computations traced into graphs and replayed), as `bprop check --jit`.
// Exit status: 0 all passed, 1 a case failed, 2 a file is unreadable or malformed.
// bprop-check --outcomes FILE...: how each case ends, one JSON object per line, as `bprop check --outcomes`;
// exit status 0 when it finished.
// In both modes: exit status 3, after a message on stderr, when the WebAssembly module crashed (a trap, a stack
// overflow, or something thrown that is not an Error); 2 when it cannot be loaded.
import { readFile } from 'node:fs/promises';

import { BpropError, init } from '../index.js';

const usage =
  'usage: bprop-check [-v] [--jit] FILE...\n' +
  '       bprop-check --outcomes FILE...\n' +
  'Runs every case of the vector files (format bprop-vectors/1, see docs/vectors.md). Prints one line\n' +
  "per failing case (FILE: CASE: the worst element or the error) and closes with 'N passed, N failed'.\n" +
  'With -v (--verbose) passing cases are listed too, error cases with the message they raised.\n' +
  'With --jit each case runs through jit: its program, and the gradient computations with it, are traced\n' +
  'into graphs and replayed (as `bprop check --jit`); the expectations are the same.\n' +
  'Exit status: 0 all passed, 1 a case failed, 2 a file is unreadable or malformed.\n' +
  'With --outcomes the expectations are ignored: each case is run (with its first-order gradients when it\n' +
  'has wrt names) and one JSON object per line says how it ended, as `bprop check --outcomes` prints it:\n' +
  '  {"file", "case", "outcome", "shape" and "dtype" when ok, "message" when not}, and {"file",\n' +
  '  "reading_error"} per reading problem. Exit status 0 when it finished.\n' +
  'In both modes the exit status is 3 when the WebAssembly module crashed (a trap), 2 when it cannot load.\n';

const CRASHED = 3;

const args = process.argv.slice(2);
if (args.length === 0 || args[0] === '--help' || args[0] === '-h') {
  (args.length === 0 ? process.stderr : process.stdout).write(usage);
  process.exit(args.length === 0 ? 2 : 0);
}
const flags = new Set(['-v', '--verbose', '--outcomes', '--jit']);
const verbose = args.includes('-v') || args.includes('--verbose');
const outcomes = args.includes('--outcomes');
const jit = args.includes('--jit');
const paths = args.filter((a) => !flags.has(a));
if (outcomes && jit) {
  process.stderr.write('bprop-check: --outcomes runs cases eagerly; it does not combine with --jit\n');
  process.exit(2);
}

// The file's text, or a reading problem worded as the native reader words it. Bytes that are not UTF-8 are a
// reading problem (natively the JSON parser rejects them; decoding them here would replace them instead).
async function readVectorFile(path) {
  let bytes;
  try {
    bytes = await readFile(path);
  } catch {
    return { problem: `${path}: cannot open the file` };
  }
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return { problem: `${path}: not valid JSON: the file is not UTF-8 text` };
  }
}

// What the module threw when it did not fail as bprop fails (a recorded error becomes a BpropError).
function crashDescription(e) {
  if (e instanceof WebAssembly.RuntimeError) return `the WebAssembly module trapped: ${e.message}`;
  if (e instanceof RangeError) return `stack overflow or range error in the WebAssembly module: ${e.message}`;
  if (!(e instanceof Error)) return `something that is not an Error was thrown: ${String(e)}`;
  return null;
}

let current = ''; // the file being run, named when the module crashes

async function check(bp) {
  let passed = 0;
  let failed = 0;
  let malformed = false;
  const out = [];
  for (const path of paths) {
    current = path;
    const { text, problem } = await readVectorFile(path);
    if (problem !== undefined) {
      out.push(`error: ${problem}`);
      malformed = true;
      continue;
    }
    const s = bp.runVectors(text, path, { jit });
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
  return malformed ? 2 : failed > 0 ? 1 : 0;
}

// Lines go out file by file, so that those before a crash are kept.
async function printOutcomes(bp) {
  for (const path of paths) {
    current = path;
    const { text, problem } = await readVectorFile(path);
    const lines = [];
    if (problem !== undefined) {
      lines.push({ file: path, reading_error: problem });
    } else {
      const r = bp.vectorOutcomes(text, path);
      for (const e of r.errors) lines.push({ file: path, reading_error: e });
      for (const c of r.cases) {
        const line = { file: path, case: c.name, outcome: c.outcome };
        if (c.outcome === 'ok') Object.assign(line, { shape: c.shape, dtype: c.dtype });
        else line.message = c.message;
        lines.push(line);
      }
    }
    if (lines.length > 0) process.stdout.write(`${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
  }
  return 0;
}

let bp;
try {
  bp = await init();
} catch (e) {
  process.stderr.write(`bprop-check: cannot load the WebAssembly module: ${e?.message ?? e}\n`);
  process.exit(2);
}
try {
  process.exitCode = outcomes ? await printOutcomes(bp) : await check(bp);
} catch (e) {
  const crash = crashDescription(e);
  if (crash !== null) {
    process.stderr.write(`bprop-check: ${crash}${current ? ` (running ${current})` : ''}\n${e?.stack ?? ''}\n`);
    process.exit(CRASHED);
  }
  const what = e instanceof BpropError ? `a '${e.kind}' error` : 'an error';
  process.stderr.write(`bprop-check: ${what} outside any case: ${e.message}\n`);
  process.exit(2);
}
