// The package's `bprop-check` command: same output shape and exit status as the native `bprop check`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../web/bin/bprop-check.mjs', import.meta.url));
const vectors = fileURLToPath(new URL('../vectors/', import.meta.url));
const run = (...args) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });

test('bprop-check passes every vector file and closes with the summary line', () => {
  const files = readdirSync(vectors).filter((f) => f.endsWith('.json')).map((f) => join(vectors, f));
  const r = run(...files);
  const lines = r.stdout.trim().split('\n');
  assert.match(lines[lines.length - 1], /^\d+ passed, 0 failed$/);
  assert.equal(r.status, 0, r.stdout);
});

test('bprop-check reports a failing case, a malformed file and an unreadable one', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bprop-check-'));
  const wrong = join(dir, 'wrong.json');
  writeFileSync(wrong, JSON.stringify({
    format: 'bprop-vectors/1',
    source: 'hand-written',
    cases: [{
      name: 'square_wrong', dtype: 'float64',
      inputs: { x: { shape: [], dtype: 'float64', data: [3] } },
      program: [['y', 'mul', 'x', 'x']], output: 'y', wrt: ['x'],
      expected: { value: { shape: [], dtype: 'float64', data: [9] }, grads: { x: { shape: [], dtype: 'float64', data: [7] } } },
    }],
  }));
  let r = run(wrong);
  assert.equal(r.status, 1);
  assert.match(r.stdout, /wrong\.json: square_wrong: /);
  assert.match(r.stdout, /0 passed, 1 failed\n$/);
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, '{"format": "bprop-vectors/1", "cases": [{"name": "c"}]}');
  r = run(bad);
  assert.equal(r.status, 2);
  assert.match(r.stdout, /^error: .*bad\.json/m);
  r = run(join(dir, 'missing.json'));
  assert.equal(r.status, 2);
  assert.match(r.stdout, /missing\.json: cannot open the file/);
});
