#!/usr/bin/env node
// Builds the GPT's plain-text corpus from the Debian package fortunes (scripts/setup.sh installs it):
//   node scripts/make-text-corpus.mjs [--src DIR] [--out DIR] [--slice BYTES --slice-out DIR]
// Every fortune file of DIR (default /usr/share/games/fortunes) but the pictures (art, ascii-art) and translate-me,
// in name order, split into fortunes at lines holding a single '%'. Each fortune: tabs become four spaces, trailing
// spaces are cut, leading and trailing blank lines dropped; fortunes with a byte outside printable ASCII and newline
// are left out, and a repeated fortune is kept once. Fortune i (from 0, in that order) goes to validation when
// i % 10 == 9, to training otherwise. Each file is its fortunes, each followed by "\n%\n".
// Writes OUT/train.txt, OUT/val.txt and OUT/corpus.json (counts, vocabulary, SHA-256 of both files); default OUT
// build/data/fortunes. With --slice, also a slice for the browser demo: the first BYTES of train.txt and
// BYTES / 10 of val.txt, cut after a whole fortune, in --slice-out.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const flag = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : def;
};
const src = flag('--src', '/usr/share/games/fortunes');
const out = flag('--out', 'build/data/fortunes');
const slice = Number(flag('--slice', 0));
const sliceOut = flag('--slice-out', '');
const SKIP = new Set(['art', 'ascii-art', 'translate-me']);

let files;
try {
  files = readdirSync(src)
    .filter((f) => !f.includes('.') && !SKIP.has(f) && statSync(join(src, f)).isFile())
    .sort();
} catch (e) {
  console.error(`make-text-corpus: cannot read ${src} (${e.code ?? e.message}); install the Debian package fortunes`);
  process.exit(2);
}
if (!files.length) {
  console.error(`make-text-corpus: no fortune files in ${src}`);
  process.exit(2);
}

const printable = /^[\n\x20-\x7e]*$/;
const seen = new Set();
const fortunes = [];
let dropped = 0;
for (const f of files) {
  const text = readFileSync(join(src, f), 'latin1');
  for (const raw of text.split(/\n%\n|^%\n/m)) {
    const lines = raw.replace(/\t/g, '    ').split('\n').map((l) => l.replace(/ +$/, ''));
    while (lines.length && lines[0] === '') lines.shift();
    while (lines.length && lines[lines.length - 1] === '') lines.pop();
    if (lines.length && lines[lines.length - 1] === '%') lines.pop();
    const fortune = lines.join('\n');
    if (!fortune) continue;
    if (!printable.test(fortune)) {
      dropped++;
      continue;
    }
    if (seen.has(fortune)) continue;
    seen.add(fortune);
    fortunes.push(fortune);
  }
}

const train = [];
const val = [];
fortunes.forEach((f, i) => (i % 10 === 9 ? val : train).push(f));
const join_ = (list) => list.map((f) => `${f}\n%\n`).join('');
const trainText = join_(train);
const valText = join_(val);
const sha = (s) => createHash('sha256').update(s, 'latin1').digest('hex');
const vocab = [...new Set(trainText + valText)].sort().join('');

mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'train.txt'), trainText, 'latin1');
writeFileSync(join(out, 'val.txt'), valText, 'latin1');
const summary = {
  source: src,
  files: files.length,
  fortunes: fortunes.length,
  dropped_non_ascii: dropped,
  train: { fortunes: train.length, bytes: trainText.length, sha256: sha(trainText) },
  val: { fortunes: val.length, bytes: valText.length, sha256: sha(valText) },
  vocabulary: vocab,
};
writeFileSync(join(out, 'corpus.json'), `${JSON.stringify(summary, null, 2)}\n`);
console.log(
  `make-text-corpus: ${fortunes.length} fortunes from ${files.length} files -> ${out}/train.txt ` +
    `(${trainText.length} bytes), val.txt (${valText.length} bytes), vocabulary ${vocab.length}`,
);

if (slice > 0) {
  if (!sliceOut) {
    console.error('make-text-corpus: --slice needs --slice-out DIR');
    process.exit(2);
  }
  const cut = (list, bytes) => {
    let s = '';
    for (const f of list) {
      const next = `${f}\n%\n`;
      if (s.length + next.length > bytes) break;
      s += next;
    }
    return s;
  };
  mkdirSync(sliceOut, { recursive: true });
  const t = cut(train, slice);
  const v = cut(val, Math.floor(slice / 10));
  writeFileSync(join(sliceOut, 'train.txt'), t, 'latin1');
  writeFileSync(join(sliceOut, 'val.txt'), v, 'latin1');
  console.log(`make-text-corpus: slice -> ${sliceOut}/train.txt (${t.length} bytes), val.txt (${v.length} bytes)`);
}
