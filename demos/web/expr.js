// A small parser for f(x): numbers, x, pi, e, + - * / ^ (right associative), unary minus, parentheses,
// implicit multiplication (3x, 2(x+1), x sin(x)) and the functions below. parse() returns a tree;
// build(tree, bp) returns (x) => tensor made of bprop ops; toCode(tree) the same function as JavaScript.

export const FUNCTIONS = ['sin', 'cos', 'tan', 'exp', 'log', 'sqrt', 'tanh', 'sigmoid', 'abs', 'relu'];
const CONSTANTS = { pi: Math.PI, e: Math.E };
const JS_MATH = {
  sin: Math.sin, cos: Math.cos, tan: Math.tan, exp: Math.exp, log: Math.log, sqrt: Math.sqrt, tanh: Math.tanh,
  sigmoid: (v) => 1 / (1 + Math.exp(-v)), abs: Math.abs, relu: (v) => Math.max(v, 0),
};

export class ParseError extends Error {
  constructor(message, position) {
    super(position === undefined ? message : `${message} (at character ${position + 1})`);
    this.name = 'ParseError';
    this.position = position;
  }
}

function tokenize(src) {
  const tokens = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) { i++; continue; }
    const num = /^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(src.slice(i));
    if (num) { tokens.push({ type: 'num', value: Number(num[0]), pos: i }); i += num[0].length; continue; }
    const id = /^[A-Za-z_][A-Za-z_0-9]*/.exec(src.slice(i));
    if (id) { tokens.push({ type: 'id', value: id[0], pos: i }); i += id[0].length; continue; }
    if (c === '*' && src[i + 1] === '*') { tokens.push({ type: 'op', value: '^', pos: i }); i += 2; continue; }
    if ('+-*/^()'.includes(c)) { tokens.push({ type: 'op', value: c, pos: i }); i++; continue; }
    throw new ParseError(`unexpected character '${c}'`, i);
  }
  tokens.push({ type: 'end', pos: src.length });
  return tokens;
}

/** Parses src into a tree of {type: 'num'|'x'|'neg'|'bin'|'call', ...}; throws ParseError with a clear message. */
export function parse(src) {
  if (typeof src !== 'string' || !src.trim()) throw new ParseError('type a function of x, for example sin(x) * x^2');
  const tokens = tokenize(src);
  let k = 0;
  const peek = () => tokens[k];
  const isOp = (t, v) => t.type === 'op' && t.value === v;
  const startsPrimary = (t) => t.type === 'num' || t.type === 'id' || isOp(t, '(');

  function expr() {
    let left = term();
    while (isOp(peek(), '+') || isOp(peek(), '-')) {
      const op = tokens[k++].value;
      left = { type: 'bin', op, left, right: term() };
    }
    return left;
  }
  function term() {
    let left = unary();
    for (;;) {
      const t = peek();
      if (isOp(t, '*') || isOp(t, '/')) {
        k++;
        left = { type: 'bin', op: t.value, left, right: unary() };
      } else if (startsPrimary(t)) {
        left = { type: 'bin', op: '*', left, right: power() }; // implicit multiplication
      } else return left;
    }
  }
  function unary() {
    if (isOp(peek(), '-')) { k++; return { type: 'neg', arg: unary() }; }
    if (isOp(peek(), '+')) { k++; return unary(); }
    return power();
  }
  function power() {
    const base = primary();
    if (isOp(peek(), '^')) { k++; return { type: 'bin', op: '^', left: base, right: unary() }; }
    return base;
  }
  function primary() {
    const t = tokens[k++];
    if (t.type === 'num') return { type: 'num', value: t.value };
    if (t.type === 'id') {
      if (t.value === 'x') return { type: 'x' };
      if (t.value in CONSTANTS) return { type: 'num', value: CONSTANTS[t.value], name: t.value };
      if (FUNCTIONS.includes(t.value)) {
        if (!isOp(peek(), '(')) throw new ParseError(`${t.value} needs parentheses: ${t.value}(...)`, peek().pos);
        k++;
        const arg = expr();
        if (!isOp(peek(), ')')) throw new ParseError(`missing ')' after the argument of ${t.value}`, peek().pos);
        k++;
        return { type: 'call', fn: t.value, arg };
      }
      throw new ParseError(`unknown name '${t.value}' (use x, pi, e or one of ${FUNCTIONS.join(', ')})`, t.pos);
    }
    if (isOp(t, '(')) {
      const inner = expr();
      if (!isOp(peek(), ')')) throw new ParseError("missing ')'", peek().pos);
      k++;
      return inner;
    }
    if (t.type === 'end') throw new ParseError('the expression ends too early', t.pos);
    throw new ParseError(`unexpected '${t.value}'`, t.pos);
  }

  const tree = expr();
  if (peek().type !== 'end') {
    const t = peek();
    throw new ParseError(isOp(t, ')') ? "unmatched ')'" : `unexpected '${t.value}'`, t.pos);
  }
  return tree;
}

/** The value of a tree that does not depend on x, or null. */
function constantValue(n) {
  switch (n.type) {
    case 'num': return n.value;
    case 'x': return null;
    case 'neg': { const v = constantValue(n.arg); return v === null ? null : -v; }
    case 'call': { const v = constantValue(n.arg); return v === null ? null : JS_MATH[n.fn](v); }
    case 'bin': {
      const a = constantValue(n.left);
      const b = constantValue(n.right);
      if (a === null || b === null) return null;
      return { '+': a + b, '-': a - b, '*': a * b, '/': a / b, '^': a ** b }[n.op];
    }
    default: return null;
  }
}

/** Small integer powers as products (exact at x = 0 to every order); others with the pow op. */
function intPowerPlan(b) {
  return typeof b === 'number' && Number.isInteger(b) && Math.abs(b) <= 16 && b !== 0 ? Math.abs(b) : null;
}
function powTensor(a, b, bp) {
  const n = intPowerPlan(b);
  if (n === null) return bp.ops.pow(a, b);
  const r = intPower(a, n, (t) => t.square(), (t, u) => t.mul(u));
  return b < 0 ? r.reciprocal() : r;
}
function powCode(a, bNode) {
  const b = bNode.num ? Number(bNode.s.replace('Math.PI', String(Math.PI)).replace('Math.E', String(Math.E))) : null;
  const n = intPowerPlan(b);
  if (n === null) return `bp.ops.pow(${a}, ${bNode.s})`;
  const r = intPower(a, n, (t) => `${t}.square()`, (t, u) => `${t}.mul(${u})`);
  return b < 0 ? `${r}.reciprocal()` : r;
}
/** a^n (n >= 1) by squaring: square(a^(n/2)) times a when n is odd. */
function intPower(a, n, square, mul) {
  if (n === 1) return a;
  const half = intPower(a, Math.floor(n / 2), square, mul);
  const sq = square(half);
  return n % 2 ? mul(sq, a) : sq;
}

/** (x) => tensor: the tree as bprop ops (constants folded; a constant f gives x * 0 + c). */
export function build(tree, bp) {
  const ev = (n, x) => {
    const c = constantValue(n);
    if (c !== null) return c;
    switch (n.type) {
      case 'x': return x;
      case 'neg': return ev(n.arg, x).neg();
      case 'call': return ev(n.arg, x)[n.fn]();
      case 'bin': {
        const a = ev(n.left, x);
        const b = ev(n.right, x);
        if (typeof a === 'number') {
          // number op tensor
          if (n.op === '+') return b.add(a);
          if (n.op === '*') return b.mul(a);
          if (n.op === '-') return b.neg().add(a);
          if (n.op === '/') return b.reciprocal().mul(a);
          return bp.ops.pow(bp.onesLike(b).mul(a), b);
        }
        if (n.op === '^') return powTensor(a, b, bp);
        return a[{ '+': 'add', '-': 'sub', '*': 'mul', '/': 'div' }[n.op]](b);
      }
      default: throw new ParseError(`cannot evaluate node ${n.type}`);
    }
  };
  return (x) => {
    const r = ev(tree, x);
    return typeof r === 'number' ? x.mul(0).add(r) : r;
  };
}

function fmtNum(v) {
  if (v === Math.PI) return 'Math.PI';
  if (v === Math.E) return 'Math.E';
  return String(Number(v.toPrecision(12)));
}

/** The tree as the JavaScript bprop code that build() runs. */
export function toCode(tree) {
  const js = (n) => {
    const c = constantValue(n);
    if (c !== null) return { num: true, s: fmtNum(c) };
    switch (n.type) {
      case 'x': return { s: 'x' };
      case 'neg': return { s: `${js(n.arg).s}.neg()` };
      case 'call': return { s: `${js(n.arg).s}.${n.fn}()` };
      case 'bin': {
        const a = js(n.left);
        const b = js(n.right);
        if (a.num) {
          if (n.op === '+') return { s: `${b.s}.add(${a.s})` };
          if (n.op === '*') return { s: `${b.s}.mul(${a.s})` };
          if (n.op === '-') return { s: `${b.s}.neg().add(${a.s})` };
          if (n.op === '/') return { s: `${b.s}.reciprocal().mul(${a.s})` };
          return { s: `bp.ops.pow(bp.onesLike(${b.s}).mul(${a.s}), ${b.s})` };
        }
        if (n.op === '^') return { s: powCode(a.s, b) };
        return { s: `${a.s}.${{ '+': 'add', '-': 'sub', '*': 'mul', '/': 'div' }[n.op]}(${b.s})` };
      }
      default: return { s: '?' };
    }
  };
  const r = js(tree);
  return r.num ? `x.mul(0).add(${r.s})` : r.s;
}
