// Running the two builds' vector runners in outcomes mode, each in its own process: the native
// `bprop check --outcomes` and the WebAssembly `bprop-check --outcomes` (web/bin/bprop-check.mjs).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const NATIVE_BIN = join(ROOT, 'build/native/bprop');
export const WASM_CLI = join(ROOT, 'web/bin/bprop-check.mjs');
export const SANITIZE_BIN = join(ROOT, 'build/sanitize/bprop');
const WASM_MODULE = join(ROOT, 'web/dist/bprop.wasm');

// The native runner's address space is capped, so that an allocation the size checks let through fails
// (and shows as an 'other' outcome) instead of taking the machine's memory. WebAssembly has its own ceiling.
const NATIVE_ADDRESS_SPACE_KB = 16 * 1024 * 1024;

export const BUILDS = {
  native: {
    name: 'native',
    present: () => existsSync(NATIVE_BIN),
    command: (args) => [
      '/bin/sh', ['-c', `ulimit -v ${NATIVE_ADDRESS_SPACE_KB}; exec "$0" "$@"`, NATIVE_BIN, 'check', ...args],
    ],
  },
  // The native program under AddressSanitizer + UndefinedBehaviorSanitizer (scripts/test-sanitizers.sh): a
  // memory error that does not crash the plain build stops this one. Options as that script sets them; no
  // address-space cap (the sanitizer reserves terabytes of it), null from an allocation too large instead.
  sanitize: {
    name: 'sanitize',
    present: () => existsSync(SANITIZE_BIN),
    command: (args) => [SANITIZE_BIN, ['check', ...args]],
    env: {
      ASAN_OPTIONS: 'allocator_may_return_null=1:detect_leaks=1:abort_on_error=0:halt_on_error=1',
      UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1',
    },
  },
  wasm: {
    name: 'wasm',
    present: () => existsSync(WASM_MODULE),
    command: (args) => [process.execPath, [WASM_CLI, ...args]],
  },
};

/** The builds whose program is built, in a fixed order (native first); `names` to choose among them. */
export function presentBuilds(names = Object.keys(BUILDS)) {
  return names.map((n) => {
    if (!BUILDS[n]) throw new Error(`unknown build '${n}' (expected ${Object.keys(BUILDS).join(', ')})`);
    return BUILDS[n];
  }).filter((b) => b.present());
}

/** Runs a build's checker with `args`: {status, signal, timedOut, stdout, stderr}. */
export function runChecker(build, args, { timeoutMs = 120000 } = {}) {
  const [cmd, argv] = build.command(args);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...build.env } });
    const out = [];
    const err = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    // A program that cannot be started (missing, being relinked) makes the build unusable, not a finding.
    child.on('error', (e) => reject(new BuildUnusable(`${cmd}: ${e.message}`)));
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      const text = (chunks) => Buffer.concat(chunks).toString('utf8');
      resolve({ status, signal, timedOut, stdout: text(out), stderr: text(err) });
    });
  });
}

/** Raised when a build cannot run at all (its module does not load): an environment problem, not a finding. */
export class BuildUnusable extends Error {}

// The lines of stderr that say what went wrong: a sanitizer's report, an abort's reason, a trap.
const HEADLINE =
  /runtime error:|ERROR: \w+Sanitizer|^SUMMARY:|terminate called|Assertion|munmap_chunk|free\(\)|double free|bprop-check:/;

/** Why a run did not finish normally, or null. */
export function runProblem(run) {
  if (run.status === 2 && run.stderr.includes('cannot load the WebAssembly module')) {
    throw new BuildUnusable(run.stderr.trim());
  }
  const lines = run.stderr.trim().split('\n');
  const headlines = lines.filter((l) => HEADLINE.test(l)).slice(0, 3);
  const tail = [...headlines, ...lines.slice(-4).filter((l) => !headlines.includes(l))].join('\n');
  if (run.timedOut) return `did not finish in time${tail ? `\n${tail}` : ''}`;
  if (run.signal) return `killed by ${run.signal}${tail ? `\n${tail}` : ''}`;
  if (run.status === 3) return `the WebAssembly module crashed (exit status 3)\n${tail}`;
  if (run.status !== 0) return `exit status ${run.status}${tail ? `\n${tail}` : ''}`;
  return null;
}

/**
 * Runs the outcomes mode of `build` on `paths`: {problem, files}, `problem` saying why the process did not
 * finish normally (null when it did) and `files` mapping each path to {readingErrors, cases: [{case, outcome,
 * shape, dtype, message}]} in the order printed.
 */
export async function runOutcomes(build, paths, options) {
  const run = await runChecker(build, ['--outcomes', ...paths], options);
  const files = new Map(paths.map((p) => [p, { readingErrors: [], cases: [] }]));
  let problem = runProblem(run);
  for (const text of run.stdout.split('\n')) {
    if (text === '') continue;
    let line;
    try {
      line = JSON.parse(text);
    } catch {
      problem ??= `printed a line that is not JSON: ${text.slice(0, 200)}`;
      continue;
    }
    const file = files.get(line.file);
    if (!file) problem ??= `printed a line for a file it was not given: ${text.slice(0, 200)}`;
    else if ('reading_error' in line) file.readingErrors.push(line.reading_error);
    else file.cases.push(line);
  }
  return { problem, files };
}
