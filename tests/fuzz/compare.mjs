// The properties every run must have: each case ends "ok" or with a typed bprop error (never "other"), and
// where both builds ran, they agree on each case (the same outcome; for ok, the same shape and dtype) and on the
// number of reading problems of each file. Crashes are found before this, by the process's exit.

const KINDS = new Set(['ok', 'shape', 'dtype', 'value', 'unknown_op', 'memory']);

/** One case's outcome in words: "ok [2, 3] float32" or "value: <message>". */
export function outcomeText(c) {
  if (!c) return 'no outcome';
  return c.outcome === 'ok' ? `ok ${JSON.stringify(c.shape)} ${c.dtype}` : `${c.outcome}: ${c.message}`;
}

function sameOutcome(a, b) {
  if (a.outcome !== b.outcome) return false;
  if (a.outcome !== 'ok') return true;
  return a.dtype === b.dtype && JSON.stringify(a.shape) === JSON.stringify(b.shape);
}

/**
 * Findings for the files of one run: `results` maps a build name to runOutcomes' `files` (only builds that
 * finished). A finding is {kind: 'other' | 'untyped' | 'disagreement' | 'reading_errors' | 'cases', file, case?,
 * builds, detail}.
 */
export function compareOutcomes(paths, results) {
  const findings = [];
  const builds = [...results.keys()];
  for (const file of paths) {
    for (const build of builds) {
      for (const c of results.get(build).get(file).cases) {
        if (c.outcome === 'other') {
          const detail = `an exception that is not a bprop error: ${c.message}`;
          findings.push({ kind: 'other', file, case: c.case, builds: [build], detail });
        } else if (!KINDS.has(c.outcome)) {
          const detail = `unknown outcome ${JSON.stringify(c.outcome)}`;
          findings.push({ kind: 'untyped', file, case: c.case, builds: [build], detail });
        }
      }
    }
    for (let i = 1; i < builds.length; ++i) {
      const [a, b] = [builds[0], builds[i]];
      const fa = results.get(a).get(file);
      const fb = results.get(b).get(file);
      if (fa.readingErrors.length !== fb.readingErrors.length) {
        findings.push({
          kind: 'reading_errors', file, builds: [a, b],
          detail: `${a}: ${fa.readingErrors.length} reading problems ${JSON.stringify(fa.readingErrors.slice(0, 3))}; ` +
            `${b}: ${fb.readingErrors.length} ${JSON.stringify(fb.readingErrors.slice(0, 3))}`,
        });
      }
      const names = (f) => f.cases.map((c) => c.case).join('\n');
      if (names(fa) !== names(fb)) {
        const detail = `${a} ran ${fa.cases.length} cases, ${b} ran ${fb.cases.length}, or other names`;
        findings.push({ kind: 'cases', file, builds: [a, b], detail });
        continue;
      }
      fa.cases.forEach((ca, k) => {
        const cb = fb.cases[k];
        if (!sameOutcome(ca, cb)) {
          const detail = `${a}: ${outcomeText(ca)}\n${b}: ${outcomeText(cb)}`;
          findings.push({ kind: 'disagreement', file, case: ca.case, builds: [a, b], detail });
        }
      });
    }
  }
  return findings;
}
