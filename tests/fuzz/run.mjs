#!/usr/bin/env node
// The fuzzer from the command line: rounds of generated vector files through both builds for --seconds
// (or --rounds), then the regression files; prints every finding with minimal vector files, writes those
// files under --out, and exits 1 when something was found (docs/fuzzing.md).
//
//   node tests/fuzz/run.mjs [--seconds N] [--rounds N] [--seed S] [--files N] [--cases N] [--malformed N]
//                           [--builds native,sanitize,wasm] [--out DIR] [--keep]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { BuildUnusable, NATIVE_BIN, presentBuilds, ROOT } from './builds.mjs';
import { readCatalogue } from './catalogue.mjs';
import { checkFiles, checkRegressions, describeFinding, findingSignature, writeRound } from './fuzz.mjs';

const { values: opt } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    rounds: { type: 'string' },
    seed: { type: 'string', default: String(Date.now() % 1000000) },
    files: { type: 'string', default: '40' },
    cases: { type: 'string', default: '50' },
    malformed: { type: 'string', default: '20' },
    builds: { type: 'string', default: 'native,sanitize,wasm' },
    out: { type: 'string', default: join(ROOT, 'test-output/fuzz') },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (opt.help) {
  process.stdout.write(
    'usage: node tests/fuzz/run.mjs [--seconds N] [--rounds N] [--seed S] [--files N] [--cases N] [--malformed N]\n' +
      '                               [--builds native,sanitize,wasm] [--out DIR] [--keep]\n' +
      'Generates rounds of vector files (--files files of --cases cases and --malformed malformed files each)\n' +
      'from --seed until --seconds have passed or --rounds are done, runs them and the regression files through\n' +
      'the outcomes modes of the builds that are built among --builds (the native program, the same under\n' +
      'ASan + UBSan from scripts/test-sanitizers.sh, the WebAssembly module), and prints every crash, untyped\n' +
      'error and disagreement with minimal vector files, also written to --out (default test-output/fuzz).\n' +
      '--keep keeps the generated files.\n' +
      'Exit status 0 when nothing was found, 1 when something was, 2 when a build could not be run.\n',
  );
  process.exit(0);
}

const asked = opt.builds.split(',');
const builds = presentBuilds(asked);
if (!builds.some((b) => b.name === 'native')) {
  process.stderr.write(`bprop fuzz: ${NATIVE_BIN} is missing (it gives the op catalogue): bash scripts/build-native.sh\n`);
  process.exit(2);
}
if (asked.includes('wasm') && !builds.some((b) => b.name === 'wasm')) {
  process.stderr.write('bprop fuzz: web/dist/ is missing: the WebAssembly build is not fuzzed\n');
}

const seed = Number(opt.seed);
const catalogue = readCatalogue(NATIVE_BIN);
const workDir = mkdtempSync(join(tmpdir(), 'bprop-fuzz-'));
const deadline = Date.now() + Number(opt.seconds) * 1000;
const maxRounds = opt.rounds !== undefined ? Number(opt.rounds) : Infinity;
// Each problem is printed (and its minimal files written) the first time it is seen; repeats are counted.
const findings = [];
const repeated = new Map();
function report(found) {
  for (const f of found) {
    const signature = findingSignature(f);
    if (repeated.has(signature)) {
      repeated.get(signature).count += 1;
      continue;
    }
    repeated.set(signature, { signature, count: 0 });
    process.stdout.write(`${describeFinding(f)}\n`);
    findings.push(f);
  }
}
// Minimal files are made once per signature: a problem that fires on many files is cut down once.
const minimized = new Set();
const minimizeOnce = (f) => !minimized.has(findingSignature(f)) && Boolean(minimized.add(findingSignature(f)));
let cases = 0;
let files = 0;
let round = 0;
process.stdout.write(`bprop fuzz: seed ${seed}, builds ${builds.map((b) => b.name).join(' + ')}, ${catalogue.length} ops\n`);
let unusable = null; // a build that stopped being runnable (rebuilt while the fuzzer ran): the run stops there
try {
  while (round < maxRounds && (round === 0 || Date.now() < deadline)) {
    const roundDir = join(workDir, `round-${round}`);
    const written = writeRound(roundDir, catalogue, {
      seed, round, files: Number(opt.files), casesPerFile: Number(opt.cases), malformed: Number(opt.malformed),
    });
    const found = await checkFiles(written.paths, builds, { workDir: roundDir, minimize: minimizeOnce });
    report(found);
    cases += written.cases;
    files += written.paths.length;
    if (!opt.keep && found.length === 0) rmSync(roundDir, { recursive: true, force: true });
    ++round;
  }
  report(await checkRegressions(builds, { workDir, minimize: minimizeOnce }));
} catch (e) {
  if (!(e instanceof BuildUnusable)) throw e;
  unusable = e;
  process.stderr.write(`bprop fuzz: a build could not run, stopping: ${e.message}\n`);
}

if (findings.length > 0) {
  mkdirSync(opt.out, { recursive: true });
  findings.forEach((f, i) => {
    (f.minimal ?? []).forEach((text, k) => writeFileSync(join(opt.out, `seed${seed}-${i}-${f.kind}-${k}.json`), text));
  });
  const repeats = [...repeated.values()].filter((r) => r.count > 0);
  for (const r of repeats) process.stdout.write(`seen ${r.count} more times: ${r.signature}\n`);
}
const kept = opt.keep || findings.length > 0 ? ` (generated files kept in ${workDir})` : '';
if (!kept) rmSync(workDir, { recursive: true, force: true });
process.stdout.write(
  `bprop fuzz: ${round} rounds, ${cases} generated cases in ${files} files, and the regression files: ` +
    `${findings.length} distinct findings${findings.length > 0 ? `, minimal files in ${opt.out}` : ''}${kept}\n`,
);
process.exitCode = findings.length > 0 ? 1 : unusable ? 2 : 0;
