// Reading a vector file back for minimising, without losing what JSON.parse would change: numbers keep their
// text (9223372036854775807, -0.0 and 1e999 survive) as Raw values, so that the minimised file says exactly
// what the original said. Files nested deeper than MAX_DEPTH are not read (they are minimal as they are).
import { Raw } from './json-text.mjs';

const MAX_DEPTH = 200;

/** The deepest nesting of lists and objects in `text`, brackets inside strings skipped. */
export function nestingDepth(text) {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; ++i) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') ++i;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '[' || ch === '{') deepest = Math.max(deepest, ++depth);
    else if (ch === ']' || ch === '}') --depth;
  }
  return deepest;
}

/** The value of `text`, numbers as Raw; throws on malformed or too deeply nested text. */
export function parseLossless(text) {
  if (nestingDepth(text) > MAX_DEPTH) throw new Error('nested too deeply to minimise');
  let i = 0;
  const fail = () => {
    throw new Error(`not JSON at ${i}`);
  };
  const space = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) ++i;
  };
  const value = () => {
    space();
    const ch = text[i];
    if (ch === '{') {
      ++i;
      const obj = {};
      space();
      if (text[i] === '}') return ++i, obj;
      for (;;) {
        space();
        if (text[i] !== '"') fail();
        const key = string();
        space();
        if (text[i++] !== ':') fail();
        // defineProperty: a key "__proto__" is a field like any other
        Object.defineProperty(obj, key, { value: value(), enumerable: true, writable: true, configurable: true });
        space();
        if (text[i] === ',') ++i;
        else if (text[i] === '}') return ++i, obj;
        else fail();
      }
    }
    if (ch === '[') {
      ++i;
      const list = [];
      space();
      if (text[i] === ']') return ++i, list;
      for (;;) {
        list.push(value());
        space();
        if (text[i] === ',') ++i;
        else if (text[i] === ']') return ++i, list;
        else fail();
      }
    }
    if (ch === '"') return string();
    for (const [word, v] of [['true', true], ['false', false], ['null', null]]) {
      if (text.startsWith(word, i)) return (i += word.length), v;
    }
    const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) fail();
    i += m[0].length;
    return new Raw(m[0]);
  };
  const string = () => {
    const m = /^"(?:[^"\\\u0000-\u001f]|\\.)*"/s.exec(text.slice(i));
    if (!m) fail();
    i += m[0].length;
    return JSON.parse(m[0]);
  };
  const v = value();
  space();
  if (i !== text.length) fail();
  return v;
}
