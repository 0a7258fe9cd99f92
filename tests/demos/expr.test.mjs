// The explorer's expression parser (demos/web/expr.js) in Node: trees, errors, generated code, and values and
// derivatives through the package (no browser needed).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { init } from '../../web/index.js';
import { build, parse, ParseError, toCode } from '../../demos/web/expr.js';

test('parses the documented syntax into bprop code', () => {
  const cases = [
    ['sin(x) * x^2', 'x.sin().mul(x.square())'],
    ['tanh(3x)', 'x.mul(3).tanh()'],
    ['log(1 + exp(x))', 'x.exp().add(1).log()'],
    ['x^3', 'x.square().mul(x)'],
    ['x**4', 'x.square().square()'],
    ['x^-2', 'x.square().reciprocal()'],
    ['x^0.5', 'bp.ops.pow(x, 0.5)'],
    ['-x^2', 'x.square().neg()'],
    ['2(x+1)', 'x.add(1).mul(2)'],
    ['x sin(x)', 'x.mul(x.sin())'],
    ['pi x', 'x.mul(Math.PI)'],
    ['e^x', 'bp.ops.pow(bp.onesLike(x).mul(Math.E), x)'],
    ['2^3', 'x.mul(0).add(8)'],
    ['1/x - x/2', 'x.reciprocal().mul(1).sub(x.div(2))'],
    ['sigmoid(x) + relu(x) - abs(x) + sqrt(x) + cos(x) + tan(x)', 'x.sigmoid().add(x.relu()).sub(x.abs()).add(x.sqrt()).add(x.cos()).add(x.tan())'],
  ];
  for (const [src, code] of cases) assert.equal(toCode(parse(src)), code, src);
});

test('explains what it cannot parse', () => {
  const cases = [
    ['', /type a function of x/],
    ['   ', /type a function of x/],
    ['sin x', /sin needs parentheses/],
    ['x +', /ends too early/],
    ['(x', /missing '\)'/],
    ['x)', /unmatched '\)'/],
    ['foo(x)', /unknown name 'foo'/],
    ['y + 1', /unknown name 'y'/],
    ['3 $ x', /unexpected character '\$' \(at character 3\)/],
    ['x * * x', /unexpected '\*'/],
  ];
  for (const [src, re] of cases) {
    assert.throws(() => parse(src), (e) => e instanceof ParseError && re.test(e.message), src);
  }
});

test('values and nested derivatives through bprop', async () => {
  const bp = await init();
  const at = (src, xs) =>
    bp.tidy(() => {
      const f = build(parse(src), bp);
      const d1 = bp.grad((x) => f(x).sum());
      const d2 = bp.grad((x) => d1(x).sum());
      const d3 = bp.grad((x) => d2(x).sum());
      const x = bp.tensor(xs, { dtype: 'float64' });
      return [f, d1, d2, d3].map((g) => Array.from(g(x).dataSync()));
    });
  assert.deepEqual(at('x^3', [2, 0, -1]), [[8, 0, -1], [12, 0, 3], [12, 0, -6], [6, 6, 6]]);
  // Integer powers are products, so every derivative is exact at 0 too.
  assert.deepEqual(at('sin(x) * x^2', [0]), [[0], [0], [0], [6]]);
  const [f, d1, d2] = at('log(1 + exp(x))', [0]);
  assert.ok(Math.abs(f[0] - Math.LN2) < 1e-15 && d1[0] === 0.5 && d2[0] === 0.25);
  assert.deepEqual(at('3', [1, 2]), [[3, 3], [0, 0], [0, 0], [0, 0]]);
});
