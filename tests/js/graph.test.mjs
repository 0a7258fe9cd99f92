// The exported forward/backward graph, from JavaScript (same core API as native).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, ShapeError } from '../../web/index.js';
import { liveTensors } from './memory.mjs';

const bp = await init();

test('exportGraph of x*x*x shows two muls and their backward operators', () => {
  const before = liveTensors(bp);
  const x = bp.tensor(2, { dtype: 'float64' });
  const g = bp.exportGraph((x) => x.mul(x).mul(x), [x], { names: ['x'] });
  x.dispose();
  assert.equal(g.format, 'bprop-graph/1');
  assert.deepEqual(g.forward.map((n) => n.op), ['mul', 'mul']);
  assert.equal(g.tensors[g.output].values[0], 8);
  assert.deepEqual(g.backward.map((s) => s.forward), [1, 0]);
  for (const step of g.backward) {
    assert.equal(step.op, 'mul');
    assert.ok(step.ops.length > 0 && step.ops.every((o) => o.op === 'mul'));
  }
  assert.equal(g.tensors[g.grads[0].tensor].values[0], 12);
  assert.equal(g.tensors[g.inputs[0].tensor].name, 'x');
  assert.deepEqual(liveTensors(bp), before);
});

test('exportGraph errors are typed and leave the module usable', () => {
  assert.throws(() => bp.exportGraph((x) => x.add(bp.ones([3])), [bp.ones([2])]), ShapeError);
  const g = bp.exportGraph((x) => x.sin().sum(), [bp.ones([2])]);
  assert.deepEqual(g.forward.map((n) => n.op), ['sin', 'sum']);
});
