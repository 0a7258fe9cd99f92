// Every JavaScript example in README.md and docs/*.md, run as it stands in the Markdown: each ```js block is
// written into the package (so `import ... from 'bprop'` resolves to this package, as it does for a user) and run
// by Node; a `// ...` comment after a console.log call is the line that call must print.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const outDir = join(root, 'test-output', 'examples');

/** The ```js blocks of a Markdown file, with the line each starts on. */
export function jsBlocks(markdown) {
  const blocks = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; ++i) {
    if (!/^```(js|javascript|mjs)\s*$/.test(lines[i])) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !lines[end].startsWith('```')) ++end;
    blocks.push({ line: start + 1, code: lines.slice(start, end).join('\n') });
    i = end;
  }
  return blocks;
}

/** The printed lines a block promises: the comment after each console.log(...) line, in order. */
export function expectedOutput(code) {
  return code
    .split('\n')
    .filter((l) => /^\s*console\.log\(/.test(l) && /\);\s*\/\/ /.test(l))
    .map((l) => l.slice(l.lastIndexOf('// ') + 3).trim());
}

const markdownFiles = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const examples = markdownFiles.flatMap((file) =>
  jsBlocks(readFileSync(join(root, file), 'utf8')).map((b) => ({ ...b, file })),
);

mkdirSync(outDir, { recursive: true });
after(() => rmSync(outDir, { recursive: true, force: true }));

test('the Markdown has JavaScript examples, and each promises some output', () => {
  assert.ok(examples.some((e) => e.file === 'README.md'), 'README.md has no ```js block');
  for (const e of examples) assert.ok(expectedOutput(e.code).length > 0, `${e.file}:${e.line} prints nothing it checks`);
});

for (const e of examples) {
  test(`${e.file}:${e.line} runs and prints what it says`, () => {
    const path = join(outDir, `${e.file.replace(/[/.]/g, '_')}_${e.line}.mjs`);
    writeFileSync(path, e.code);
    const out = execFileSync(process.execPath, [path], { cwd: root, encoding: 'utf8', timeout: 60000 });
    assert.deepEqual(out.trim().split('\n').map((l) => l.trim()), expectedOutput(e.code));
  });
}

test('every JavaScript example type-checks against the package\'s types (tsc --checkJs)', () => {
  const tsc = join(root, 'node_modules', '.bin', 'tsc');
  const dir = join(root, 'test-output', 'examples-types');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const e of examples) writeFileSync(join(dir, `${e.file.replace(/[/.]/g, '_')}_${e.line}.mjs`), e.code);
  // (checkJs without strict: wrong names, arguments and options are errors; untyped helper parameters are not)
  const compilerOptions = {
    target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', lib: ['es2022', 'esnext.disposable', 'dom'],
    allowJs: true, checkJs: true, noEmit: true, strict: false, types: [],
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['*.mjs'] }));
  try {
    execFileSync(tsc, ['-p', dir], { cwd: root, encoding: 'utf8' });
  } catch (err) {
    assert.fail(`tsc found errors in the Markdown's examples:\n${err.stdout}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the extraction: blocks, their lines and the promised output', () => {
  const md = 'text\n```js\nconsole.log(1 + 1);   // 2\nconst a = 1; // not printed\n```\n```sh\nls\n```\n';
  const blocks = jsBlocks(md);
  assert.equal(blocks.length, 1);
  assert.equal(blocks[0].line, 3);
  assert.deepEqual(expectedOutput(blocks[0].code), ['2']);
});
