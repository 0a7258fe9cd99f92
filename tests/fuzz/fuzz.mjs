// The fuzzer: generates vector files, runs both builds' outcomes mode on them, and turns crashes,
// untyped errors and disagreements into findings, each with minimal vector files that still show it.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { runChecker, runOutcomes, runProblem } from './builds.mjs';
import { compareOutcomes } from './compare.mjs';
import { genMalformedFile, genVectorFileText } from './files.mjs';
import { Minimizer } from './minimize.mjs';
import { Random } from './random.mjs';

export const REGRESSIONS = new URL('./regressions/', import.meta.url);

/**
 * Writes the files of one round into `dir`: `files` files of `casesPerFile` generated cases and `malformed`
 * malformed files, all from (seed, round). Returns their paths and the number of generated cases.
 */
export function writeRound(dir, catalogue, { seed, round = 0, files, casesPerFile, malformed }) {
  mkdirSync(dir, { recursive: true });
  const rng = new Random(seed).derive(round);
  const paths = [];
  for (let f = 0; f < files; ++f) {
    const path = join(dir, `r${round}-f${f}.json`);
    const source = `fuzz seed ${seed} round ${round} file ${f}`;
    writeFileSync(path, genVectorFileText(rng.derive(0, f), catalogue, casesPerFile, source));
    paths.push(path);
  }
  for (let m = 0; m < malformed; ++m) {
    const path = join(dir, `r${round}-m${m}.json`);
    writeFileSync(path, genMalformedFile(rng.derive(1, m), catalogue));
    paths.push(path);
  }
  return { paths, cases: files * casesPerFile };
}

// The predicate that re-finds a finding on another file.
function predicateFor(finding, builds, timeoutMs) {
  const byName = new Map(builds.map((b) => [b.name, b]));
  if (finding.kind === 'crash') {
    const build = byName.get(finding.builds[0]);
    return async (path) => (await runOutcomes(build, [path], { timeoutMs })).problem !== null;
  }
  const these = finding.builds.map((n) => byName.get(n));
  return async (path) => {
    const runs = await Promise.all(these.map((b) => runOutcomes(b, [path], { timeoutMs })));
    if (runs.some((r) => r.problem !== null)) return false;
    const again = compareOutcomes([path], new Map(these.map((b, i) => [b.name, runs[i].files])));
    return again.some((f) => f.kind === finding.kind && f.builds.join() === finding.builds.join());
  };
}

// A build crashed on `path`: the finding (minimised) and what is known of the file: `read` (the file read back,
// null when it is not a list of cases) and the indices of the cases the build crashes on.
async function crashFinding(build, path, problem, builds, workDir, timeoutMs, minimize) {
  const finding = { kind: 'crash', builds: [build.name], file: path, detail: problem };
  const minimizer = new Minimizer(workDir, predicateFor(finding, builds, timeoutMs));
  const text = readFileSync(path);
  const read = await minimizer.failingGroups(text, undefined, Infinity); // every crashing case, to leave them out
  if (minimize(finding)) finding.minimal = await minimizer.minimizeGroups(read, text);
  const crashing = new Set((read?.groups ?? []).flat().map((c) => read.file.cases.indexOf(c)));
  return { finding, read, crashing };
}

// Finds the files each build crashes on (running them one by one) and in them the cases. Returns the findings
// and the files to compare instead of `paths`: those no build crashed on, and for each of the others a file of
// its remaining cases. Null instead of the files when a build crashes only on files together.
async function isolateCrashes(paths, builds, runs, { workDir, timeoutMs, minimize }) {
  const findings = [];
  const crashed = new Map(); // path -> {read, crashing: indices of cases any build crashed on}
  for (const [i, build] of builds.entries()) {
    if (runs[i].problem === null) continue;
    let found = false;
    for (const path of paths) {
      const alone = await runOutcomes(build, [path], { timeoutMs });
      if (alone.problem === null) continue;
      found = true;
      const r = await crashFinding(build, path, alone.problem, builds, workDir, timeoutMs, minimize);
      findings.push(r.finding);
      const known = crashed.get(path);
      crashed.set(path, {
        read: r.read,
        crashing: new Set([...(known?.crashing ?? []), ...r.crashing]),
        whole: r.read === null || Boolean(known?.whole), // not a list of cases: nothing of it is left to compare
      });
    }
    if (!found) {
      const detail = `only when run together: ${runs[i].problem}`;
      findings.push({ kind: 'crash', builds: [build.name], file: paths.join(' '), detail });
      return { findings, compared: null };
    }
  }
  const compared = [];
  for (const path of paths) {
    const known = crashed.get(path);
    if (!known) {
      compared.push(path);
      continue;
    }
    const rest = known.whole ? [] : known.read.file.cases.filter((_, k) => !known.crashing.has(k));
    if (rest.length === 0) continue;
    // in the work folder: the crashed file may be a regression file of the source tree
    const restPath = join(workDir, `${basename(path).replace(/(\.json)?$/, '')}-${compared.length}.rest.json`);
    writeFileSync(restPath, known.read.textOf(rest));
    compared.push(restPath);
  }
  return { findings, compared };
}

/**
 * Runs every build on `paths` and returns the findings: {kind, builds, file, case?, detail, minimal: [file text]}.
 * When a build crashes, the files it crashes on are found by running them one by one, and in them the cases
 * (by bisection); the other cases of those files are checked as usual. `minimize(finding)` says whether to
 * make minimal files for a finding (default: always).
 */
export async function checkFiles(paths, builds, { workDir, timeoutMs = 120000, minimize = () => true } = {}) {
  workDir ??= mkdtempSync(join(tmpdir(), 'bprop-fuzz-'));
  const findings = [];
  let runs = await Promise.all(builds.map((b) => runOutcomes(b, paths, { timeoutMs })));
  let compared = paths;
  if (runs.some((r) => r.problem !== null)) {
    const isolated = await isolateCrashes(paths, builds, runs, { workDir, timeoutMs, minimize });
    findings.push(...isolated.findings);
    if (isolated.compared === null) return findings;
    compared = isolated.compared;
    runs = await Promise.all(builds.map((b) => runOutcomes(b, compared, { timeoutMs })));
    const still = runs.findIndex((r) => r.problem !== null);
    if (still >= 0) {
      const detail = `after leaving out the crashing cases: ${runs[still].problem}`;
      findings.push({ kind: 'crash', builds: [builds[still].name], file: compared.join(' '), detail });
      return findings;
    }
  }
  const compareFindings = compareOutcomes(compared, new Map(builds.map((b, i) => [b.name, runs[i].files])));
  for (const f of compareFindings) {
    if (minimize(f)) {
      const minimizer = new Minimizer(workDir, predicateFor(f, builds, timeoutMs));
      f.minimal = await minimizer.minimize(readFileSync(f.file), f.case);
    }
  }
  return [...findings, ...compareFindings];
}

/**
 * The regression files: tests/fuzz/regressions/*.json for every build, regressions/<build>/*.json for one build,
 * and regressions/unreadable/*.json, files every build must refuse to read (past a limit of the format).
 */
export function regressionFiles() {
  const list = (url) => readdirSync(url).filter((f) => f.endsWith('.json')).sort().map((f) => join(fileURLToPath(url), f));
  const perBuild = {};
  let unreadable = [];
  for (const entry of readdirSync(REGRESSIONS, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const files = list(new URL(`${entry.name}/`, REGRESSIONS));
    if (entry.name === 'unreadable') unreadable = files;
    else perBuild[entry.name] = files;
  }
  return { shared: list(REGRESSIONS), perBuild, unreadable };
}

/**
 * The regression files, every time. All of them through checkFiles (no crash, typed errors, agreement); then,
 * in each build, the shared ones and those under regressions/<build>/ through its ordinary `check` (their
 * expectations must hold: the per-build ones state build-specific results, e.g. a 'memory' error where only
 * WebAssembly hits its limit), and each unreadable one must be refused as such (exit status 2, naming the limit).
 */
export async function checkRegressions(builds, options) {
  const { shared, perBuild, unreadable } = regressionFiles();
  const findings = await checkFiles([...shared, ...unreadable], builds, options);
  const timeoutMs = options?.timeoutMs;
  for (const build of builds) {
    const files = [...shared, ...(perBuild[build.name] ?? [])];
    const run = await runChecker(build, files, { timeoutMs });
    const problem = runProblem(run);
    if (problem !== null) {
      const lines = run.stdout.trim().split('\n').slice(-20).join('\n');
      findings.push({ kind: 'expectation', builds: [build.name], file: files.join(' '), detail: `${problem}\n${lines}` });
    }
    for (const file of unreadable) {
      const refused = await runChecker(build, [file], { timeoutMs });
      const said = `${refused.stdout}\n${refused.stderr}`;
      if (!refused.signal && !refused.timedOut && refused.status === 2 && /more than the limit/.test(said)) continue;
      const how = refused.signal ? `killed by ${refused.signal}` : refused.timedOut ? 'no end in time' : `exit status ${refused.status}`;
      findings.push({
        kind: 'expectation', builds: [build.name], file,
        detail: `expected the file to be refused as unreadable (exit status 2, a limit named), got ${how}\n${said.trim().split('\n').slice(-4).join('\n')}`,
      });
    }
  }
  return findings;
}

/**
 * What tells one problem from another, so that a long run reports each once: the kind, the builds and the
 * first line that says what went wrong (a sanitizer's report, the outcomes), numbers and paths left out.
 */
export function findingSignature(f) {
  const lines = f.detail.split('\n');
  const headline =
    lines.find((l) => /runtime error:|Sanitizer|terminate called|trapped|munmap_chunk/.test(l)) ?? lines.slice(0, 2).join(' ');
  const shape = headline
    .replace(/\/tmp\/\S+/g, 'FILE')
    .replace(/0x[0-9a-f]+/g, 'ADDR')
    .replace(/(?<![\w.])-?(\d+(\.\d+)?(e[+-]?\d+)?|nan|inf)\b/g, 'N');
  return `${f.kind} ${f.builds.join('/')} ${shape}`;
}

/** A finding in words, with its minimal files. */
export function describeFinding(f) {
  const where = f.case !== undefined ? `${f.file}: case ${f.case}` : f.file;
  const lines = [`[${f.kind}] ${f.builds.join(' vs ')}: ${where}`, ...f.detail.split('\n').map((l) => `    ${l}`)];
  for (const text of f.minimal ?? []) {
    const shown = text.length > 4000 ? `${String(text).slice(0, 2000)} ... (${text.length} bytes)` : String(text);
    lines.push('  minimal file:', `    ${shown}`);
  }
  return lines.join('\n');
}
