// JSON text for generated vector files. JSON.stringify cannot write what the fuzzer needs: integers beyond
// 2^53 (written exactly from BigInts, e.g. 9223372036854775807) and verbatim text (`-0.0`, `1e999`, nesting
// 100,000 lists deep, which a recursive writer would not survive).

/** Text written as it is. */
export class Raw {
  constructor(text) {
    this.text = text;
  }
}

export function toJsonText(value) {
  if (value instanceof Raw) return value.text;
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(', ')}]`;
  const fields = Object.entries(value).filter(([, v]) => v !== undefined);
  return `{${fields.map(([k, v]) => `${JSON.stringify(k)}: ${toJsonText(v)}`).join(', ')}}`;
}

/** `inner` wrapped in `depth` lists ("[[[...]]]") or objects ('{"a": {"a": ...}}'). */
export function nested(depth, inner = '1', kind = 'list') {
  return kind === 'list'
    ? new Raw(`${'['.repeat(depth)}${inner}${']'.repeat(depth)}`)
    : new Raw(`${'{"a": '.repeat(depth)}${inner}${'}'.repeat(depth)}`);
}
