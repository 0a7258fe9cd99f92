// The package as published: TypeScript declarations agree with an example, and `npm pack` gives a tarball
// that installs into an empty project and runs.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

test('tsc --noEmit accepts the typed example (tests/js/types/example.ts)', () => {
  const tsc = join(root, 'node_modules', '.bin', 'tsc');
  assert.ok(existsSync(tsc), 'typescript is a devDependency: run npm install');
  const r = spawnSync(tsc, ['--noEmit', '-p', join(root, 'tests/js/tsconfig.json')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test('npm pack: the tarball installs into an empty project, imports and differentiates', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bprop-pack-'));
  const packed = JSON.parse(execFileSync(npm, ['pack', '--json', '--pack-destination', dir], { cwd: root, encoding: 'utf8' }));
  const files = packed[0].files.map((f) => f.path).sort();
  const modules = readdirSync(join(root, 'web')).filter((f) => f.endsWith('.js')).map((f) => `web/${f}`);
  for (const f of ['web/dist/bprop.cjs', 'web/dist/bprop.wasm', 'web/index.d.ts', 'web/bin/bprop-check.mjs', ...modules]) {
    assert.ok(files.includes(f), `${f} is in the package`);
  }
  const app = join(dir, 'app');
  execFileSync('mkdir', ['-p', app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }));
  execFileSync(npm, ['install', '--offline', '--no-audit', '--no-fund', join(dir, packed[0].filename)], { cwd: app, encoding: 'utf8' });
  writeFileSync(join(app, 'main.js'), [
    "import { init } from 'bprop';",
    'const bp = await init();',
    'const cube = (x) => x.mul(x).mul(x);',
    'console.log(bp.grad(cube)(bp.tensor(2)).item(), bp.grad(bp.grad(cube))(bp.tensor(2)).item());',
  ].join('\n'));
  const out = execFileSync(process.execPath, ['main.js'], { cwd: app, encoding: 'utf8' });
  assert.equal(out.trim(), '12 12');
  assert.ok(existsSync(join(app, 'node_modules', '.bin', 'bprop-check')));
});
