// Whole vector files: a list of generated cases, or text that is not a well-formed vector file at all
// (truncated JSON, nesting 100,000 deep inside an attribute or data, wrong top-level types, bytes that are
// not UTF-8). Files are returned as text or bytes, ready to be written.
import { genCase } from './cases.mjs';
import { nested, toJsonText } from './json-text.mjs';
import { mutateCase } from './mutate.mjs';

export const FORMAT = 'bprop-vectors/1';

/** A vector file object from cases. */
export function vectorFile(cases, source = 'fuzz') {
  return { format: FORMAT, source, cases };
}

/** A case made from scratch, or mutated from one of the shared vectors: half and half. */
export function genAnyCase(rng, catalogue, name) {
  return rng.chance(0.5) ? genCase(rng, catalogue, name) : mutateCase(rng, catalogue, name);
}

/** The text of a file of `count` generated cases; case i is made from rng.derive(i) alone. */
export function genVectorFileText(rng, catalogue, count, source) {
  const cases = Array.from({ length: count }, (_, i) => genAnyCase(rng.derive(i), catalogue, `c${i}`));
  return toJsonText(vectorFile(cases, source));
}

// A small well-formed case whose attribute (or data) is `value`.
function caseWithAttr(value) {
  return {
    name: 'deep_attr',
    inputs: { x: { shape: [2], dtype: 'float32', data: [1, 2] } },
    program: [['y', 'sum', 'x', { axis: value }]],
    output: 'y',
    expected: { error: 'value' },
  };
}

function caseWithData(data) {
  return {
    name: 'deep_data',
    inputs: { x: { shape: [1], dtype: 'float32', data } },
    program: [['y', 'neg', 'x']],
    output: 'y',
    expected: { error: 'value' },
  };
}

const DEEP = 100000;

/** Text (or bytes) that the readers must reject or partly reject, without crashing. */
export function genMalformedFile(rng, catalogue) {
  const valid = () => genVectorFileText(rng.derive(1), catalogue, rng.int(1, 4), 'fuzz malformed');
  const depth = () => rng.pick([DEEP, DEEP, 65, 1000]);
  return rng.weighted([
    [6, () => { const t = valid(); return t.slice(0, rng.int(0, t.length - 1)); }],
    [2, () => toJsonText(vectorFile([caseWithAttr(nested(depth()))]))],
    [1, () => toJsonText(vectorFile([caseWithAttr(nested(depth(), '1', 'object'))]))],
    [2, () => toJsonText(vectorFile([caseWithData(nested(depth()))]))],
    [1, () => toJsonText(vectorFile([caseWithData([nested(depth())])]))],
    [1, () => toJsonText({ format: FORMAT, cases: nested(depth(), '{}') })],
    [1, () => nested(depth(), '').text],
    [1, () => nested(depth(), '"x"', 'object').text],
    [1, () => toJsonText(vectorFile([caseWithAttr(nested(30))]))],
    [3, () => rng.pick(['', ' ', '[]', '42', '"x"', 'null', 'true', '{}', '{"format": 1}', `{"format": "${FORMAT}"}`,
      `{"format": "${FORMAT}", "cases": {}}`, `{"format": "${FORMAT}", "cases": [1, "x", null, [], {}]}`,
      '{"format": "bprop-vectors/2", "cases": []}', `{"format": "${FORMAT}", "cases": []} trailing`,
      `{"format": "${FORMAT}", "cases": []}{"format": "${FORMAT}", "cases": []}`, '// comment\n{}', '{"a": 1,}',
      '[1e999]', '{"format": "\\ud800", "cases": []}'])],
    [1, () => Buffer.concat([Buffer.from('{"format": "'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(`", "cases": []}`)])],
    [1, () => `\ufeff${valid()}`],
    [1, () => valid().replace('"cases": [', '"cases": [{"name": "dup"}, {"name": "dup"}, ')],
    [1, () => valid().replace(/"c0"/g, '"c\\u0000\\ud83d\\ude00"')],
    [1, () => valid().replace(/"c0"/g, JSON.stringify('c'.repeat(100000)))],
    [1, () => valid().replace('"format": ', '"format": "bprop-vectors/0", "format": ')],
  ]);
}

