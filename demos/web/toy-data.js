// The 2-D toy data sets of the training page (spiral, circles, xor) and the seeded generator they use.
// Plain JavaScript with no imports: the training worker uses it.

/** A seeded uniform generator on [0, 1) (mulberry32). */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** n points in [-1, 1]^2 with labels 0/1: { pts: Float32Array(2n), labels: Int32Array(n) }. */
export function makeData(kind, n, seed = 1, noise = 0.05) {
  const r = rng(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
  const pts = [];
  const labels = [];
  for (let i = 0; i < n; i++) {
    const c = i % 2;
    let x;
    let y;
    if (kind === 'spiral') {
      const t = (Math.floor(i / 2) / (n / 2)) * 2.5 * Math.PI + 0.3;
      const rad = t / (2.5 * Math.PI + 0.3);
      const a = t + c * Math.PI;
      x = rad * Math.sin(a);
      y = rad * Math.cos(a);
    } else if (kind === 'circles') {
      const a = 2 * Math.PI * r();
      const rad = c === 0 ? 0.3 * Math.sqrt(r()) : 0.6 + 0.35 * r();
      x = rad * Math.cos(a);
      y = rad * Math.sin(a);
    } else {
      x = 2 * r() - 1;
      y = 2 * r() - 1;
      if (Math.abs(x) < 0.05) x += x < 0 ? -0.05 : 0.05;
      if (Math.abs(y) < 0.05) y += y < 0 ? -0.05 : 0.05;
      labels.push(x * y > 0 ? 0 : 1);
      pts.push(x + noise * gauss(), y + noise * gauss());
      continue;
    }
    pts.push(x + noise * gauss(), y + noise * gauss());
    labels.push(c);
  }
  return { pts: Float32Array.from(pts), labels: Int32Array.from(labels) };
}
