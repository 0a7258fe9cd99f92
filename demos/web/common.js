// Shared pieces of the demo pages: loading the package, line plots on a canvas with a hover read-out,
// number formatting and showing code.
import { init } from '/web/index.js';

/** Loads bprop; on failure shows the error in #status and rethrows. */
export async function loadBprop() {
  const status = document.getElementById('status');
  try {
    const t0 = performance.now();
    const bp = await init();
    if (status) status.textContent = `bprop loaded (WebAssembly) in ${(performance.now() - t0).toFixed(0)} ms`;
    return bp;
  } catch (e) {
    if (status) {
      status.textContent = `Could not load bprop: ${e.message}. Build it with npm run build:wasm.`;
      status.className = 'error';
    }
    throw e;
  }
}

export function fmt(v, digits = 6) {
  if (v === null || v === undefined) return '—';
  if (typeof v !== 'number') return String(v);
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '∞' : '−∞';
  if (Object.is(v, -0) || v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e6 || a < 1e-4) return v.toExponential(digits - 2);
  return String(Number(v.toPrecision(digits)));
}

export function showCode(el, text) {
  el.textContent = text;
}

export const COLORS = ['#1f5fbf', '#d2452b', '#2c9a4b', '#8a46c2', '#c98a00'];

/**
 * A line plot on a canvas: series [{name, color, ys}] over xs; a hover read-out (calls onHover(i) with the
 * index under the mouse, or -1) and a vertical marker. Non-finite points break the line.
 */
export class LinePlot {
  constructor(canvas, { onHover, yClip = 1e6 } = {}) {
    this.canvas = canvas;
    this.onHover = onHover;
    this.yClip = yClip;
    this.xs = [];
    this.series = [];
    this.hover = -1;
    this.marker = null;
    canvas.addEventListener('mousemove', (ev) => this._move(ev));
    canvas.addEventListener('mouseleave', () => {
      this.hover = -1;
      this.draw();
      if (this.onHover) this.onHover(-1);
    });
    new ResizeObserver(() => this.draw()).observe(canvas);
  }
  setData(xs, series) {
    this.xs = xs;
    this.series = series;
    this.draw();
  }
  _layout() {
    const dpr = window.devicePixelRatio || 1;
    const w = this.canvas.clientWidth;
    const h = this.canvas.clientHeight;
    if (this.canvas.width !== Math.round(w * dpr) || this.canvas.height !== Math.round(h * dpr)) {
      this.canvas.width = Math.round(w * dpr);
      this.canvas.height = Math.round(h * dpr);
    }
    const pad = { l: 52, r: 12, t: 12, b: 28 };
    const xs = this.xs;
    let ymin = Infinity;
    let ymax = -Infinity;
    for (const s of this.series) {
      if (s.hidden) continue;
      for (const y of s.ys) {
        if (Number.isFinite(y) && Math.abs(y) < this.yClip) {
          ymin = Math.min(ymin, y);
          ymax = Math.max(ymax, y);
        }
      }
    }
    if (!Number.isFinite(ymin)) { ymin = -1; ymax = 1; }
    if (ymax - ymin < 1e-9) { ymin -= 1; ymax += 1; }
    const span = ymax - ymin;
    ymin -= span * 0.05;
    ymax += span * 0.05;
    const xmin = xs.length ? xs[0] : 0;
    const xmax = xs.length ? xs[xs.length - 1] : 1;
    return {
      dpr, w, h, pad, xmin, xmax, ymin, ymax,
      px: (x) => pad.l + ((x - xmin) / (xmax - xmin || 1)) * (w - pad.l - pad.r),
      py: (y) => pad.t + (1 - (y - ymin) / (ymax - ymin)) * (h - pad.t - pad.b),
    };
  }
  _move(ev) {
    if (!this.xs.length) return;
    const L = this._layout();
    const r = this.canvas.getBoundingClientRect();
    const mx = ev.clientX - r.left;
    const t = (mx - L.pad.l) / (L.w - L.pad.l - L.pad.r);
    const i = Math.round(t * (this.xs.length - 1));
    this.hover = Math.max(0, Math.min(this.xs.length - 1, i));
    this.draw();
    if (this.onHover) this.onHover(this.hover);
  }
  draw() {
    const L = this._layout();
    const ctx = this.canvas.getContext('2d');
    ctx.setTransform(L.dpr, 0, 0, L.dpr, 0, 0);
    ctx.clearRect(0, 0, L.w, L.h);
    ctx.font = '11px system-ui, sans-serif';
    // grid and ticks
    ctx.strokeStyle = '#e4e8ee';
    ctx.fillStyle = '#5b6573';
    ctx.lineWidth = 1;
    for (const [lo, hi, horizontal] of [[L.xmin, L.xmax, false], [L.ymin, L.ymax, true]]) {
      const step = niceStep((hi - lo) / 6);
      for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-12; v += step) {
        ctx.beginPath();
        if (horizontal) {
          const y = L.py(v);
          ctx.moveTo(L.pad.l, y);
          ctx.lineTo(L.w - L.pad.r, y);
          ctx.fillText(fmt(v, 3), 4, y + 4);
        } else {
          const x = L.px(v);
          ctx.moveTo(x, L.pad.t);
          ctx.lineTo(x, L.h - L.pad.b);
          ctx.fillText(fmt(v, 3), x - 8, L.h - 10);
        }
        ctx.stroke();
      }
    }
    // axes through zero
    ctx.strokeStyle = '#9aa3af';
    if (L.ymin < 0 && L.ymax > 0) {
      ctx.beginPath();
      ctx.moveTo(L.pad.l, L.py(0));
      ctx.lineTo(L.w - L.pad.r, L.py(0));
      ctx.stroke();
    }
    if (L.xmin < 0 && L.xmax > 0) {
      ctx.beginPath();
      ctx.moveTo(L.px(0), L.pad.t);
      ctx.lineTo(L.px(0), L.h - L.pad.b);
      ctx.stroke();
    }
    // series
    for (const s of this.series) {
      if (s.hidden) continue;
      ctx.strokeStyle = s.color;
      ctx.lineWidth = s.width ?? 2;
      ctx.setLineDash(s.dash ?? []);
      ctx.beginPath();
      let pen = false;
      for (let i = 0; i < this.xs.length; i++) {
        const y = s.ys[i];
        if (!Number.isFinite(y) || Math.abs(y) >= this.yClip) {
          pen = false;
          continue;
        }
        const X = L.px(this.xs[i]);
        const Y = Math.max(-1e4, Math.min(1e4, L.py(y)));
        if (pen) ctx.lineTo(X, Y);
        else ctx.moveTo(X, Y);
        pen = true;
      }
      ctx.stroke();
      ctx.setLineDash([]);
    }
    // hover marker
    if (this.hover >= 0 && this.hover < this.xs.length) {
      const X = L.px(this.xs[this.hover]);
      ctx.strokeStyle = '#333';
      ctx.lineWidth = 1;
      ctx.setLineDash([3, 3]);
      ctx.beginPath();
      ctx.moveTo(X, L.pad.t);
      ctx.lineTo(X, L.h - L.pad.b);
      ctx.stroke();
      ctx.setLineDash([]);
      for (const s of this.series) {
        const y = s.ys[this.hover];
        if (s.hidden || !Number.isFinite(y)) continue;
        ctx.fillStyle = s.color;
        ctx.beginPath();
        ctx.arc(X, L.py(y), 3.5, 0, 2 * Math.PI);
        ctx.fill();
      }
    }
  }
}

function niceStep(raw) {
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const p = 10 ** Math.floor(Math.log10(raw));
  const m = raw / p;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}
