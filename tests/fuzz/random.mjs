// A seeded random generator (mulberry32), so that a seed names the same vector files on every machine and
// Node version. `derive` gives an independent stream per file and per case: a case can be regenerated
// from (seed, file, case) alone, and adding cases leaves the earlier ones unchanged.

// Mixes integers into a 32-bit seed (the finaliser of MurmurHash3 after each word).
export function mixSeed(...words) {
  let h = 0x9e3779b9;
  for (const w of words) {
    h = Math.imul(h ^ (w >>> 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 0;
}

export class Random {
  constructor(seed) {
    this.seed = mixSeed(seed);
    this.state = this.seed;
  }

  /** A new generator for a part of the output, independent of how much this one has been used. */
  derive(...words) {
    return new Random(mixSeed(this.seed, ...words));
  }

  /** A float in [0, 1). */
  next() {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [lo, hi], both included. */
  int(lo, hi) {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p) {
    return this.next() < p;
  }

  pick(items) {
    return items[Math.floor(this.next() * items.length)];
  }

  /** One of `choices` ([weight, value] pairs) by weight; a function value is called to make it. */
  weighted(choices) {
    const total = choices.reduce((s, [w]) => s + w, 0);
    let x = this.next() * total;
    for (const [w, v] of choices) {
      x -= w;
      if (x < 0) return typeof v === 'function' ? v() : v;
    }
    const last = choices[choices.length - 1][1];
    return typeof last === 'function' ? last() : last;
  }

  shuffle(items) {
    const a = [...items];
    for (let i = a.length - 1; i > 0; --i) {
      const j = Math.floor(this.next() * (i + 1));
      [a[i], a[j]] = [a[j], a[i]];
    }
    return a;
  }
}
