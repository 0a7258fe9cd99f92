// Making a failing file small: the cases of the file that still fail (by bisection), then each such case
// reduced statement by statement, input by input and attribute by attribute while it still fails. What
// "fails" means is a predicate on file text (a build crashes on it, two builds disagree on it, ...), so the
// same steps serve every kind of finding. The result is a vector file ready to go into tests/fuzz/regressions/.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { vectorFile } from './files.mjs';
import { toJsonText } from './json-text.mjs';
import { parseLossless } from './lossless-json.mjs';

const MAX_GROUPS = 4; // failing cases minimised per file
const MAX_TRIES = 60; // predicate runs spent shrinking one case

/** Groups of items that fail together: single items where they fail alone. At most `maxGroups`. */
export async function bisect(items, fails, maxGroups = MAX_GROUPS) {
  const groups = [];
  const visit = async (part) => {
    if (groups.length >= maxGroups) return;
    if (part.length === 1) return void groups.push(part);
    const mid = Math.ceil(part.length / 2);
    const [left, right] = [part.slice(0, mid), part.slice(mid)];
    const leftFails = await fails(left);
    if (leftFails) await visit(left);
    const rightFails = groups.length < maxGroups && (await fails(right));
    if (rightFails) await visit(right);
    if (!leftFails && !rightFails) groups.push(part); // fails only as a whole
  };
  await visit(items);
  return groups;
}

// Names a case uses: statement arguments, output and wrt.
function usedNames(c) {
  const used = new Set([c.output, ...(c.wrt ?? [])]);
  for (const st of c.program ?? []) {
    for (const a of st.slice(2)) {
      if (typeof a === 'string') used.add(a);
      else if (Array.isArray(a)) a.forEach((n) => used.add(n));
    }
  }
  return used;
}

// Smaller variants of a case, the most reducing first.
function* reductions(c) {
  const program = Array.isArray(c.program) ? c.program : [];
  for (let k = 1; k < program.length; ++k) {
    const shorter = program.slice(0, k);
    const outs = new Set(shorter.map((st) => st[0]));
    const inputs = new Set(Object.keys(c.inputs ?? {}));
    const output = outs.has(c.output) || inputs.has(c.output) ? c.output : shorter[k - 1][0];
    yield { ...c, program: shorter, output };
  }
  for (let k = 0; k + 1 < program.length; ++k) {
    // a statement nothing later uses
    const rest = program.filter((_, j) => j !== k);
    if (!usedNames({ ...c, program: rest }).has(program[k][0])) yield { ...c, program: rest };
  }
  if (c.wrt !== undefined) yield { ...c, wrt: undefined, sens: undefined };
  if (c.sens !== undefined) yield { ...c, sens: undefined };
  if (c.dtype !== undefined) yield { ...c, dtype: undefined };
  const used = usedNames(c);
  for (const name of Object.keys(c.inputs ?? {})) {
    if (used.has(name)) continue;
    const inputs = { ...c.inputs };
    delete inputs[name];
    yield { ...c, inputs };
  }
  for (let k = 0; k < program.length; ++k) {
    const st = program[k];
    const attrs = st[st.length - 1];
    if (st.length <= 2 || attrs === null || typeof attrs !== 'object' || Array.isArray(attrs)) continue;
    for (const key of Object.keys(attrs)) {
      const fewer = { ...attrs };
      delete fewer[key];
      const shorter = Object.keys(fewer).length > 0 ? [...st.slice(0, -1), fewer] : st.slice(0, -1);
      yield { ...c, program: program.map((s, j) => (j === k ? shorter : s)) };
    }
  }
}

export class Minimizer {
  /** `fails(path)` runs what found the problem on a file and says whether it is still there. */
  constructor(workDir, fails) {
    this.workDir = workDir;
    this.fails = fails;
    this.files = 0;
  }

  async failsOn(text) {
    const path = join(this.workDir, `min-${this.files++}.json`);
    writeFileSync(path, text);
    return this.fails(path);
  }

  /**
   * The failing file read back ({source, cases}) and the groups of its cases that still fail (single cases
   * where they fail alone; `caseName` is tried alone first), at most `maxGroups`. Null when the file is not a
   * list of cases (malformed, deeply nested): it is minimal as it is.
   */
  async failingGroups(text, caseName, maxGroups = MAX_GROUPS) {
    let file;
    try {
      file = parseLossless(typeof text === 'string' ? text : text.toString('utf8'));
    } catch {
      return null;
    }
    if (!Array.isArray(file?.cases) || file.cases.length === 0) return null;
    const textOf = (cases) => toJsonText(vectorFile(cases, file.source ?? 'fuzz'));
    const named = file.cases.filter((c) => c?.name === caseName);
    if (caseName !== undefined && named.length === 1 && (await this.failsOn(textOf(named)))) {
      return { file, textOf, groups: [named] };
    }
    return { file, textOf, groups: await bisect(file.cases, (cases) => this.failsOn(textOf(cases)), maxGroups) };
  }

  /** Minimal files (text) that still fail, from a failing file's text: each failing case alone and reduced. */
  async minimize(text, caseName) {
    return this.minimizeGroups(await this.failingGroups(text, caseName), text);
  }

  /** As minimize, from failingGroups' answer; the first MAX_GROUPS groups. */
  async minimizeGroups(found, text) {
    if (found === null || found.groups.length === 0) return [text];
    const out = [];
    for (const group of found.groups.slice(0, MAX_GROUPS)) {
      out.push(group.length === 1 ? found.textOf([await this.shrink(group[0], found.textOf)]) : found.textOf(group));
    }
    return out;
  }

  async shrink(c, textOf) {
    let current = c;
    let tries = 0;
    let progress = true;
    while (progress && tries < MAX_TRIES) {
      progress = false;
      for (const smaller of reductions(current)) {
        if (++tries > MAX_TRIES) break;
        if (await this.failsOn(textOf([smaller]))) {
          current = smaller;
          progress = true;
          break;
        }
      }
    }
    return current;
  }
}
