// scripts/make-text-corpus.mjs: deterministic output from the Debian package fortunes (the same bytes twice, the
// documented split), and the demo's committed slice is what the script writes now.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const SRC = '/usr/share/games/fortunes';
const skip = existsSync(SRC) ? false : `no ${SRC} (Debian package fortunes; scripts/setup.sh installs it)`;

function make(dir, extra = []) {
  const r = spawnSync(process.execPath, [join(root, 'scripts/make-text-corpus.mjs'), '--out', dir, ...extra], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(readFileSync(join(dir, 'corpus.json'), 'utf8'));
}

test('the corpus is deterministic, split 9:1 by fortune, printable ASCII', { skip }, () => {
  const a = mkdtempSync(join(tmpdir(), 'bprop-corpus-'));
  const b = mkdtempSync(join(tmpdir(), 'bprop-corpus-'));
  try {
    const ca = make(a, ['--slice', '300000', '--slice-out', join(a, 'slice')]);
    const cb = make(b);
    assert.deepEqual(ca.train, cb.train);
    assert.deepEqual(ca.val, cb.val);
    assert.equal(ca.val.fortunes, Math.floor(ca.fortunes / 10));
    assert.ok(ca.train.bytes > 1e6 && ca.val.bytes > 1e5, JSON.stringify(ca));
    assert.match(ca.vocabulary, /^[\n -~]+$/);
    const train = readFileSync(join(a, 'train.txt'), 'latin1');
    assert.ok(train.endsWith('\n%\n'));
    assert.ok(!train.includes('\t'));
    // the committed demo slice is the script's
    for (const f of ['train.txt', 'val.txt']) {
      assert.ok(
        readFileSync(join(a, 'slice', f)).equals(readFileSync(join(root, 'demos/web/data/fortunes', f))),
        `demos/web/data/fortunes/${f} differs from what the script writes (rerun it with --slice 300000)`,
      );
    }
  } finally {
    rmSync(a, { recursive: true, force: true });
    rmSync(b, { recursive: true, force: true });
  }
});
