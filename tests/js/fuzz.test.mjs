// The fuzzer (tests/fuzz/, docs/fuzzing.md): a fixed seed's generated vector files and every regression file
// through the native and WebAssembly outcomes modes: no crash, no trap, only typed bprop errors, and the same
// outcome in both builds for every case. `npm run fuzz -- --seconds N` runs it for longer with a new seed.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { BUILDS, NATIVE_BIN } from '../fuzz/builds.mjs';
import { readCatalogue } from '../fuzz/catalogue.mjs';
import { genVectorFileText } from '../fuzz/files.mjs';
import { checkFiles, checkRegressions, describeFinding, writeRound } from '../fuzz/fuzz.mjs';
import { Random } from '../fuzz/random.mjs';

const SEED = 20261201;
const ROUND = { seed: SEED, files: 60, casesPerFile: 50, malformed: 30 }; // 3000 cases, 30 malformed files
const builds = [BUILDS.native, BUILDS.wasm];
const missing = builds.filter((b) => !b.present()).map((b) => b.name);
const skip = missing.length > 0 && `needs the ${missing.join(' and ')} build (scripts/build-native.sh, scripts/build-wasm.sh)`;

const workDir = mkdtempSync(join(tmpdir(), 'bprop-fuzz-test-'));
after(() => rmSync(workDir, { recursive: true, force: true }));

const report = (findings) => findings.map(describeFinding).join('\n\n');

test('generated vector files: no crash, only typed errors, native and WebAssembly agree', { skip, timeout: 120000 }, async () => {
  const catalogue = readCatalogue(NATIVE_BIN);
  const { paths } = writeRound(join(workDir, 'round'), catalogue, ROUND);
  const findings = await checkFiles(paths, builds, { workDir });
  assert.equal(findings.length, 0, report(findings));
});

test('regression files: no crash, only typed errors, agreement, and per-build expectations', { skip, timeout: 120000 }, async () => {
  const findings = await checkRegressions(builds, { workDir });
  assert.equal(findings.length, 0, report(findings));
});

test('a seed gives the same files every time', { skip: !BUILDS.native.present() && 'needs the native build' }, () => {
  const catalogue = readCatalogue(NATIVE_BIN);
  const text = (seed) => genVectorFileText(new Random(seed).derive(0), catalogue, 20, 'fuzz');
  assert.equal(text(5), text(5));
  assert.notEqual(text(5), text(6));
});

// The harness itself, on a stand-in checker that crashes, disagrees or throws an untyped error on cue.
test('crashes, untyped errors and disagreements are found and cut down to minimal files', { timeout: 60000 }, async () => {
  const fake = fileURLToPath(new URL('../fuzz/fake-checker.mjs', import.meta.url));
  const fakeBuild = (name) => ({ name, command: (args) => [process.execPath, [fake, '--as', name, ...args]] });
  const dir = mkdtempSync(join(workDir, 'fake-'));
  const input = { shape: [2], dtype: 'float32', data: [1, 2] };
  const kase = (name) => ({
    name, inputs: { x: input, unused: input }, program: [['y', 'neg', 'x', { alpha: 1 }], ['z', 'exp', 'y']], output: 'z',
    wrt: ['x'], expected: { error: 'value' },
  });
  const names = ['fine_0', 'disagree_1', 'fine_2', 'crash_3', 'untyped_4', 'fine_5'];
  const path = join(dir, 'cases.json');
  writeFileSync(path, JSON.stringify({ format: 'bprop-vectors/1', source: 'test', cases: names.map(kase) }));
  const findings = await checkFiles([path], [fakeBuild('a'), fakeBuild('b')], { workDir: dir });
  const summary = findings.map((f) => `${f.kind} ${f.builds.join('/')} ${f.case ?? ''}`.trim()).sort();
  // both stand-ins crash on one case; the file's other cases are still run and compared
  const expected = ['crash a', 'crash b', 'disagreement a/b disagree_1', 'other a untyped_4', 'other b untyped_4'];
  assert.deepEqual(summary, expected, report(findings));
  const crash = findings.find((f) => f.kind === 'crash');
  assert.equal(crash.minimal.length, 1);
  const minimal = JSON.parse(crash.minimal[0]);
  assert.deepEqual(minimal.cases.map((c) => c.name), ['crash_3']);
  // reduced: one statement, no wrt, no unused input, no attribute
  assert.deepEqual(minimal.cases[0].program, [['y', 'neg', 'x']]);
  assert.deepEqual(Object.keys(minimal.cases[0].inputs), ['x']);
  assert.equal(minimal.cases[0].wrt, undefined);
  const disagreement = findings.find((f) => f.kind === 'disagreement');
  assert.deepEqual(JSON.parse(disagreement.minimal[0]).cases.map((c) => c.name), ['disagree_1']);
});
