// `npm pack` of the repository, installed into an empty app the way a user installs it (offline: the package has
// no dependencies). Used by the package tests in Node and by the bundler tests in the browser.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../../', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Resolves to { dir, app, files }: a new temporary folder, the app inside it with bprop installed, the packed paths. */
export function packAndInstall(prefix = 'bprop-pack-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const packed = JSON.parse(execFileSync(npm, ['pack', '--json', '--pack-destination', dir], { cwd: root, encoding: 'utf8' }));
  const files = packed[0].files.map((f) => f.path).sort();
  const app = join(dir, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }));
  execFileSync(npm, ['install', '--offline', '--no-audit', '--no-fund', join(dir, packed[0].filename)], { cwd: app, encoding: 'utf8' });
  return { dir, app, files };
}
