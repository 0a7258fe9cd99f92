// The npm package's download size, as the issue on packages defines it (gzip -9 of each file):
// - moduleAndEntry: the wasm, its glue (web/dist/bprop.mjs) and the entry (web/index.js);
// - withImports: that plus every ES module the entry imports (the other web/*.js).
// `node tools/package-size.mjs` prints both (scripts/build-wasm.sh runs it after a build); the size test
// (tests/js/package-size.test.mjs) and `npm run bench` use packageSizes().
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const defaultRoot = fileURLToPath(new URL('../', import.meta.url));

const gz = (file) => gzipSync(readFileSync(file), { level: 9 }).length;

/** { moduleAndEntry, withImports, raw } in bytes, or null when the module is not built. */
export function packageSizes(root = defaultRoot) {
  const web = join(root, 'web');
  const core = [join(web, 'dist', 'bprop.wasm'), join(web, 'dist', 'bprop.mjs'), join(web, 'index.js')];
  if (!core.every(existsSync)) return null;
  const imported = readdirSync(web).filter((f) => f.endsWith('.js') && f !== 'index.js').map((f) => join(web, f));
  const moduleAndEntry = core.reduce((s, f) => s + gz(f), 0);
  const raw = core.reduce((s, f) => s + readFileSync(f).length, 0);
  return { moduleAndEntry, withImports: moduleAndEntry + imported.reduce((s, f) => s + gz(f), 0), raw };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const s = packageSizes();
  if (!s) {
    console.error('package-size: web/dist/ has no module (npm run build:wasm)');
    process.exit(1);
  }
  const kb = (n) => (n / 1000).toFixed(1);
  console.log(`bprop wasm package size: module + glue + entry ${kb(s.moduleAndEntry)} KB gzip (${kb(s.raw)} KB raw), ` +
    `with the modules the entry imports ${kb(s.withImports)} KB gzip`);
}
