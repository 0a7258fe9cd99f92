// An example program using the package's API; `tsc --noEmit` checks it against web/index.d.ts.
import { init, ShapeError, type Bprop, type LossScalerState, type Tensor } from 'bprop';

async function main(): Promise<void> {
  const bp: Bprop = await init();
  // Apps that host the binary elsewhere (type-checked only: the module is already loaded above).
  const fromCdn = (url: string | URL): Promise<Bprop> => init({ wasmUrl: url });
  const fromBytes = (bytes: Uint8Array): Promise<Bprop> => init({ wasmBinary: bytes });
  void fromCdn;
  void fromBytes;
  const x: Tensor = bp.tensor([[1, 2, 3], [4, 5, 6]], { dtype: 'float64' });
  const s: number = x.mul(x).sum().item();
  const rows: Tensor = bp.ops.sum(x, { axis: 1, keepdims: true });
  const ce = bp.ops.crossEntropy(bp.randn([2, 3], { seed: 1 }), bp.tensor([0, 2], { dtype: 'int32' }), { ignoreIndex: -1 });
  const cube = (t: Tensor): Tensor => t.mul(t).mul(t);
  const d2 = bp.grad(bp.grad(cube));
  const w = new bp.Parameter(bp.zeros([3, 1]), 'w');
  const step = bp.valueAndGrad((a: Tensor) => bp.ops.matmul(a, w).sum(), { gradPosition: null, weights: [w] });
  bp.tidy(() => {
    const [loss, [gw]] = step(x.cast('float32'));
    w.assign(w.sub(gw.mul(0.1)));
    return loss;
  });
  // grad's result type follows its options: one position, a list, with weights, with aux
  const g0: Tensor = bp.grad(cube)(x);
  const g01: Tensor[] = bp.grad((a: Tensor, b: Tensor) => a.mul(b).sum(), { gradPosition: [0, 1] })(x, x);
  const gw2: [Tensor, Tensor[]] = bp.grad((a: Tensor) => bp.ops.matmul(a, w).sum(), { weights: [w] })(x.cast('float32'));
  const withAux = bp.grad((a: Tensor) => [a.sum(), a.mul(2)], { hasAux: true })(x);
  const auxGrad: Tensor = withAux[0];
  const [value, grads]: [Tensor, Tensor] = bp.valueAndGrad((a: Tensor) => a.sum())(x);
  const [[out, aux], gList] = bp.valueAndGrad((a: Tensor, b: Tensor) => [a.sum(), b], { gradPosition: [1], hasAux: true })(x, x);
  const firstOfList: Tensor = gList[0];
  // toArray: the nested arrays the caller names, or untyped when it names none
  const matrix: number[][] = x.toArray<number[][]>();
  const firsts: number[] = x.toArray().map((row: number[]) => row[0]);
  // @ts-expect-error: what toArray gives is nested numbers or booleans
  x.toArray<string[]>();
  console.log(matrix.length, firsts.length);
  console.log(g0.shape, g01.length, gw2[1].length, auxGrad.shape, value.item(), grads.shape, out.shape, aux, firstOfList.shape);
  class MySquare extends bp.Cell {
    construct(t: Tensor): Tensor {
      return t.mul(t);
    }
    bprop(t: Tensor, _out: Tensor, dout: Tensor): Tensor[] {
      return [t.mul(2).mul(dout)];
    }
  }
  const net = new MySquare();
  const y: Tensor = net(bp.tensor(3));
  bp.registerPrimitive({
    name: 'example_square',
    inferShape: (shape) => shape,
    forward: (a: Float32Array) => a.map((v) => v * v),
    bprop: (a, _out, dout) => [a.mul(2).mul(dout)],
  });
  const jstep = bp.jit(bp.valueAndGrad((a: Tensor) => a.tanh().mul(a).sum()), { maxTraces: 4 });
  const jr = jstep(x);
  const ir: string = jstep.lower(x);
  const traces: number = jstep.stats().traces + jstep.stats().eagerCalls;
  const jcube = bp.jit(cube);
  const c3: Tensor = jcube(bp.tensor(2));
  jstep.dispose();
  console.log(jr, ir.length, traces, c3.item(), jcube.isDisposed);
  const r = bp.gradcheck((a) => a.tanh(), [bp.tensor([0.5], { dtype: 'float64' })], { order: 2 });
  const m: { tensors: number; bytes: number; heapBytes: number; heapUsed: number } = bp.memory();
  const kernel: 'relaxed-simd' | 'simd128' = bp.gemmKernel;
  for (const c of bp.vectorOutcomes('{"format": "bprop-vectors/1", "cases": []}', 'empty.json').cases) {
    if (c.outcome === 'ok') console.log(c.name, c.shape?.length, c.dtype);
  }
  void kernel;
  await bp.scope(async () => {
    await Promise.resolve();
    return bp.ones([2]).add(1);
  });
  // transformers
  const gpt = new bp.nn.GPT({ vocabSize: 10, context: 8, layers: 1, heads: 2, width: 8 });
  const sampled: number[] = gpt.generate([1, 2], { tokens: 3, temperature: 0.8, topK: 5, seed: 1 });
  const maps: Tensor[] = gpt.attentionWeights([1, 2, 3]);
  const mha = new bp.nn.MultiheadAttention(8, 2, { batchFirst: true });
  const q = bp.ones([1, 3, 8]);
  const attended = mha.forward(q, q, q, { isCausal: true, needWeights: true });
  const layer = new bp.nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16, normFirst: true, activation: 'gelu' });
  console.log(sampled.length, maps.length, attended.output.shape, attended.weights?.shape, layer.forward(q).output.dtype);
  // mixed precision
  const half: Tensor = bp.amp.autocast('O1', 'bfloat16', () => x.matmul(bp.ones([3, 3])));
  const scaler = new bp.amp.DynamicLossScaler(1024, 2, 100);
  const scaled: Tensor = scaler.scale(half.sum());
  const finite: Tensor = bp.amp.allFinite(scaler.unscale([scaled]));
  scaler.adjust(finite);
  console.log(scaler.currentScale, scaler.counter.item(), bp.amp.state().level);
  const saved: LossScalerState = scaler.state();
  scaler.loadState(saved);
  try {
    x.add(bp.ones([4]));
  } catch (e) {
    if (e instanceof ShapeError) console.log(e.kind, e.message);
  }
  console.log(s, rows.shape, ce.dtype, d2(2).toString(), y.item(), r.ok, m.tensors, x.dataSync().length);
}

void main();
