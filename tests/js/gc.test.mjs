// Tensors forgotten outside every scope are freed by the garbage collector (the FinalizationRegistry in
// web/index.js); tensors inside a scope are freed by the scope, not by the collector. Runs in a child Node with
// --expose-gc so the test can force collections.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const entry = fileURLToPath(new URL('../../web/index.js', import.meta.url));

// The child prints one JSON line: live tensors before, after making garbage, and after collecting.
const child = `
import { init } from ${JSON.stringify(entry)};
const bp = await init();
const collect = async () => {
  for (let i = 0; i < 20; i++) {
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 10));
  }
};
await collect();
const before = bp.memory().tensors;
(() => {
  for (let i = 0; i < 200; i++) bp.ops.mul(bp.tensor([i, i + 1, i + 2]), 2);
})();
const made = bp.memory().tensors;
await collect();
const collected = bp.memory().tensors;
// Inside a scope the scope owns the tensors: dropping the JavaScript objects early frees nothing, and the
// scope's end frees them all.
let inScope;
bp.tidy(() => {
  (() => {
    for (let i = 0; i < 50; i++) bp.ops.add(bp.tensor([i]), 1);
  })();
  inScope = bp.memory().tensors;
});
const afterScope = bp.memory().tensors;
console.log(JSON.stringify({ before, made, collected, inScope, afterScope }));
`;

test('garbage collection frees tensors dropped outside every scope', () => {
  const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', child], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const m = JSON.parse(r.stdout.trim().split('\n').pop());
  assert.ok(m.made >= m.before + 400, `made ${m.made} tensors from ${m.before}`);
  // Every one of the 400 (200 inputs and 200 products) is collectable; allow a few still pending.
  assert.ok(m.collected <= m.before + 10, `live tensors ${m.collected} after collection, ${m.before} before`);
  assert.ok(m.inScope >= m.collected + 100, `inside the scope ${m.inScope}`);
  assert.equal(m.afterScope, m.collected, 'the scope frees what it made');
});
