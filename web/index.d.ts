// Type declarations of the bprop package (web/index.js).

/** Element types: float32, float64, int32, bool. */
export type DType = 'float32' | 'float64' | 'float16' | 'bfloat16' | 'int32' | 'bool';
export type Shape = number[];
export type TypedData = Float32Array | Float64Array | Int32Array | Uint8Array;
/** Nested arrays of numbers or booleans. */
export type NestedArray = number | boolean | NestedArray[];
/** An attribute value: null, boolean, number, string, list of ints or list of int lists. */
export type AttrValue = null | boolean | number | string | number[] | number[][];
/** Attributes in camelCase ({ axis: 1, keepdims: true }, { ignoreIndex: -1 }) or snake_case; optional tensor inputs by name too. */
export type OpOptions = { [name: string]: AttrValue | Tensor | undefined };
/** An op argument: tensors (numbers become scalars), a list of tensors (concat, stack), positional attributes, options last. */
export type OpArg = Tensor | number | null | Tensor[] | AttrValue | OpOptions;

/** Base of every bprop error; `kind` names the error kind as in the vector format. */
export class BpropError extends Error {
  constructor(message: string, kind?: string);
  readonly kind: 'shape' | 'dtype' | 'value' | 'unknown_op' | 'memory' | 'internal' | string;
}
export class ShapeError extends BpropError {
  constructor(message: string);
  readonly kind: 'shape';
}
export class DTypeError extends BpropError {
  constructor(message: string);
  readonly kind: 'dtype';
}
export class ValueError extends BpropError {
  constructor(message: string);
  readonly kind: 'value';
}
export class UnknownOpError extends BpropError {
  constructor(message: string);
  readonly kind: 'unknown_op';
}
/** An allocation failed or would pass the build's size limits; the module stays usable afterwards. */
export class MemoryError extends BpropError {
  constructor(message: string);
  readonly kind: 'memory';
}

declare global {
  // Symbol.dispose, for TypeScript libs without esnext.disposable (the same declaration as that lib's).
  interface SymbolConstructor {
    readonly dispose: unique symbol;
  }
}

/** Every op of the catalogue, by its catalogue name and its camelCase alias. */
export type OpName =
  | 'abs'
  | 'adam_m'
  | 'adamM'
  | 'adam_step'
  | 'adamStep'
  | 'adam_v'
  | 'adamV'
  | 'add'
  | 'all_finite'
  | 'allFinite'
  | 'amax'
  | 'amin'
  | 'argmax'
  | 'argmin'
  | 'atan2'
  | 'avg_pool2d'
  | 'avgPool2d'
  | 'avg_pool2d_grad'
  | 'avgPool2dGrad'
  | 'batch_norm'
  | 'batchNorm'
  | 'binary_cross_entropy'
  | 'binaryCrossEntropy'
  | 'binary_cross_entropy_with_logits'
  | 'binaryCrossEntropyWithLogits'
  | 'broadcast_to'
  | 'broadcastTo'
  | 'cast'
  | 'ceil'
  | 'clamp'
  | 'concat'
  | 'conv2d'
  | 'conv2d_input_grad'
  | 'conv2dInputGrad'
  | 'conv2d_weight_grad'
  | 'conv2dWeightGrad'
  | 'cos'
  | 'cross_entropy'
  | 'crossEntropy'
  | 'div'
  | 'dropout_mask'
  | 'dropoutMask'
  | 'elu'
  | 'embedding'
  | 'equal'
  | 'erf'
  | 'exp'
  | 'expand_dims'
  | 'expandDims'
  | 'expm1'
  | 'flip'
  | 'floor'
  | 'gather'
  | 'gather_grad'
  | 'gatherGrad'
  | 'gelu'
  | 'gelu_grad'
  | 'geluGrad'
  | 'greater'
  | 'greater_equal'
  | 'greaterEqual'
  | 'identity'
  | 'l1_loss'
  | 'l1Loss'
  | 'layer_norm'
  | 'layerNorm'
  | 'leaky_relu'
  | 'leakyRelu'
  | 'less'
  | 'less_equal'
  | 'lessEqual'
  | 'log'
  | 'log1p'
  | 'log_softmax'
  | 'logSoftmax'
  | 'logsumexp'
  | 'matmul'
  | 'matmul_t'
  | 'matmulT'
  | 'max_pool2d'
  | 'maxPool2d'
  | 'max_pool2d_gather'
  | 'maxPool2dGather'
  | 'max_pool2d_grad'
  | 'maxPool2dGrad'
  | 'maximum'
  | 'mean'
  | 'minimum'
  | 'mse_loss'
  | 'mseLoss'
  | 'mul'
  | 'neg'
  | 'nll_loss'
  | 'nllLoss'
  | 'not_equal'
  | 'notEqual'
  | 'pad'
  | 'pow'
  | 'prod'
  | 'random_normal'
  | 'randomNormal'
  | 'random_uniform'
  | 'randomUniform'
  | 'reciprocal'
  | 'relu'
  | 'relu_grad'
  | 'reluGrad'
  | 'reshape'
  | 'round'
  | 'rsqrt'
  | 'scaled_dot_product_attention'
  | 'scaledDotProductAttention'
  | 'scaled_dot_product_attention_grad'
  | 'scaledDotProductAttentionGrad'
  | 'sgd_buffer'
  | 'sgdBuffer'
  | 'sgd_step'
  | 'sgdStep'
  | 'sigmoid'
  | 'sigmoid_grad'
  | 'sigmoidGrad'
  | 'sign'
  | 'silu'
  | 'sin'
  | 'slice'
  | 'smooth_l1_loss'
  | 'smoothL1Loss'
  | 'softmax'
  | 'softplus'
  | 'sqrt'
  | 'square'
  | 'squared_difference'
  | 'squaredDifference'
  | 'squeeze'
  | 'stack'
  | 'std'
  | 'stop_gradient'
  | 'stopGradient'
  | 'strided_slice'
  | 'stridedSlice'
  | 'strided_slice_grad'
  | 'stridedSliceGrad'
  | 'sub'
  | 'sum'
  | 'tan'
  | 'tanh'
  | 'tanh_grad'
  | 'tanhGrad'
  | 'tile'
  | 'transpose'
  | 'var'
  | 'where';

/** Chainable op methods: x.mul(y).sum({ axis: 0 }); the tensor is the op's first input. */
/** A tensor in an exported graph: the first `maxValues` values, row-major ("nan"/"inf"/"-inf" for non-finite). */
export interface GraphTensor {
  id: number;
  shape: number[];
  dtype: DType;
  values: (number | boolean | string)[];
  truncated: boolean;
  name?: string;
}
/** One op call in an exported graph (tensor ids; null for an omitted optional input). */
export interface GraphOp {
  op: string;
  inputs: (number | null)[];
  output: number;
  attrs: Record<string, unknown>;
  index?: number;
  differentiated?: boolean;
}
/** One backward step: the bprop of forward op `forward`, called with `dout`, running `ops`, returning `grads`. */
export interface GraphStep {
  step: number;
  forward: number | null;
  op: string;
  dout: number;
  ops: GraphOp[];
  accumulate: GraphOp[];
  grads: (number | null)[];
}
/** Format "bprop-graph/1". */
export interface GradGraph {
  format: 'bprop-graph/1';
  inputs: { name: string; tensor: number }[];
  output: number;
  tensors: GraphTensor[];
  forward: GraphOp[];
  backward: GraphStep[];
  grads: { input: number; tensor: number }[];
}

export interface TensorOps {
  abs(...args: OpArg[]): Tensor;
  adam_m(...args: OpArg[]): Tensor;
  adamM(...args: OpArg[]): Tensor;
  adam_step(...args: OpArg[]): Tensor;
  adamStep(...args: OpArg[]): Tensor;
  adam_v(...args: OpArg[]): Tensor;
  adamV(...args: OpArg[]): Tensor;
  add(...args: OpArg[]): Tensor;
  all_finite(...args: OpArg[]): Tensor;
  allFinite(...args: OpArg[]): Tensor;
  amax(...args: OpArg[]): Tensor;
  amin(...args: OpArg[]): Tensor;
  argmax(...args: OpArg[]): Tensor;
  argmin(...args: OpArg[]): Tensor;
  atan2(...args: OpArg[]): Tensor;
  avg_pool2d(...args: OpArg[]): Tensor;
  avgPool2d(...args: OpArg[]): Tensor;
  avg_pool2d_grad(...args: OpArg[]): Tensor;
  avgPool2dGrad(...args: OpArg[]): Tensor;
  batch_norm(...args: OpArg[]): Tensor;
  batchNorm(...args: OpArg[]): Tensor;
  binary_cross_entropy(...args: OpArg[]): Tensor;
  binaryCrossEntropy(...args: OpArg[]): Tensor;
  binary_cross_entropy_with_logits(...args: OpArg[]): Tensor;
  binaryCrossEntropyWithLogits(...args: OpArg[]): Tensor;
  broadcast_to(...args: OpArg[]): Tensor;
  broadcastTo(...args: OpArg[]): Tensor;
  cast(...args: OpArg[]): Tensor;
  ceil(...args: OpArg[]): Tensor;
  clamp(...args: OpArg[]): Tensor;
  concat(...args: OpArg[]): Tensor;
  conv2d(...args: OpArg[]): Tensor;
  conv2d_input_grad(...args: OpArg[]): Tensor;
  conv2dInputGrad(...args: OpArg[]): Tensor;
  conv2d_weight_grad(...args: OpArg[]): Tensor;
  conv2dWeightGrad(...args: OpArg[]): Tensor;
  cos(...args: OpArg[]): Tensor;
  cross_entropy(...args: OpArg[]): Tensor;
  crossEntropy(...args: OpArg[]): Tensor;
  div(...args: OpArg[]): Tensor;
  dropout_mask(...args: OpArg[]): Tensor;
  dropoutMask(...args: OpArg[]): Tensor;
  elu(...args: OpArg[]): Tensor;
  embedding(...args: OpArg[]): Tensor;
  equal(...args: OpArg[]): Tensor;
  erf(...args: OpArg[]): Tensor;
  exp(...args: OpArg[]): Tensor;
  expand_dims(...args: OpArg[]): Tensor;
  expandDims(...args: OpArg[]): Tensor;
  expm1(...args: OpArg[]): Tensor;
  flip(...args: OpArg[]): Tensor;
  floor(...args: OpArg[]): Tensor;
  gather(...args: OpArg[]): Tensor;
  gather_grad(...args: OpArg[]): Tensor;
  gatherGrad(...args: OpArg[]): Tensor;
  gelu(...args: OpArg[]): Tensor;
  gelu_grad(...args: OpArg[]): Tensor;
  geluGrad(...args: OpArg[]): Tensor;
  greater(...args: OpArg[]): Tensor;
  greater_equal(...args: OpArg[]): Tensor;
  greaterEqual(...args: OpArg[]): Tensor;
  identity(...args: OpArg[]): Tensor;
  l1_loss(...args: OpArg[]): Tensor;
  l1Loss(...args: OpArg[]): Tensor;
  layer_norm(...args: OpArg[]): Tensor;
  layerNorm(...args: OpArg[]): Tensor;
  leaky_relu(...args: OpArg[]): Tensor;
  leakyRelu(...args: OpArg[]): Tensor;
  less(...args: OpArg[]): Tensor;
  less_equal(...args: OpArg[]): Tensor;
  lessEqual(...args: OpArg[]): Tensor;
  log(...args: OpArg[]): Tensor;
  log1p(...args: OpArg[]): Tensor;
  log_softmax(...args: OpArg[]): Tensor;
  logSoftmax(...args: OpArg[]): Tensor;
  logsumexp(...args: OpArg[]): Tensor;
  matmul(...args: OpArg[]): Tensor;
  matmul_t(...args: OpArg[]): Tensor;
  matmulT(...args: OpArg[]): Tensor;
  max_pool2d(...args: OpArg[]): Tensor;
  maxPool2d(...args: OpArg[]): Tensor;
  max_pool2d_gather(...args: OpArg[]): Tensor;
  maxPool2dGather(...args: OpArg[]): Tensor;
  max_pool2d_grad(...args: OpArg[]): Tensor;
  maxPool2dGrad(...args: OpArg[]): Tensor;
  maximum(...args: OpArg[]): Tensor;
  mean(...args: OpArg[]): Tensor;
  minimum(...args: OpArg[]): Tensor;
  mse_loss(...args: OpArg[]): Tensor;
  mseLoss(...args: OpArg[]): Tensor;
  mul(...args: OpArg[]): Tensor;
  neg(...args: OpArg[]): Tensor;
  nll_loss(...args: OpArg[]): Tensor;
  nllLoss(...args: OpArg[]): Tensor;
  not_equal(...args: OpArg[]): Tensor;
  notEqual(...args: OpArg[]): Tensor;
  pad(...args: OpArg[]): Tensor;
  pow(...args: OpArg[]): Tensor;
  prod(...args: OpArg[]): Tensor;
  random_normal(...args: OpArg[]): Tensor;
  randomNormal(...args: OpArg[]): Tensor;
  random_uniform(...args: OpArg[]): Tensor;
  randomUniform(...args: OpArg[]): Tensor;
  reciprocal(...args: OpArg[]): Tensor;
  relu(...args: OpArg[]): Tensor;
  relu_grad(...args: OpArg[]): Tensor;
  reluGrad(...args: OpArg[]): Tensor;
  reshape(...args: OpArg[]): Tensor;
  round(...args: OpArg[]): Tensor;
  rsqrt(...args: OpArg[]): Tensor;
  scaled_dot_product_attention(...args: OpArg[]): Tensor;
  scaledDotProductAttention(...args: OpArg[]): Tensor;
  scaled_dot_product_attention_grad(...args: OpArg[]): Tensor;
  scaledDotProductAttentionGrad(...args: OpArg[]): Tensor;
  sgd_buffer(...args: OpArg[]): Tensor;
  sgdBuffer(...args: OpArg[]): Tensor;
  sgd_step(...args: OpArg[]): Tensor;
  sgdStep(...args: OpArg[]): Tensor;
  sigmoid(...args: OpArg[]): Tensor;
  sigmoid_grad(...args: OpArg[]): Tensor;
  sigmoidGrad(...args: OpArg[]): Tensor;
  sign(...args: OpArg[]): Tensor;
  silu(...args: OpArg[]): Tensor;
  sin(...args: OpArg[]): Tensor;
  slice(...args: OpArg[]): Tensor;
  smooth_l1_loss(...args: OpArg[]): Tensor;
  smoothL1Loss(...args: OpArg[]): Tensor;
  softmax(...args: OpArg[]): Tensor;
  softplus(...args: OpArg[]): Tensor;
  sqrt(...args: OpArg[]): Tensor;
  square(...args: OpArg[]): Tensor;
  squared_difference(...args: OpArg[]): Tensor;
  squaredDifference(...args: OpArg[]): Tensor;
  squeeze(...args: OpArg[]): Tensor;
  stack(...args: OpArg[]): Tensor;
  std(...args: OpArg[]): Tensor;
  stop_gradient(...args: OpArg[]): Tensor;
  stopGradient(...args: OpArg[]): Tensor;
  strided_slice(...args: OpArg[]): Tensor;
  stridedSlice(...args: OpArg[]): Tensor;
  strided_slice_grad(...args: OpArg[]): Tensor;
  stridedSliceGrad(...args: OpArg[]): Tensor;
  sub(...args: OpArg[]): Tensor;
  sum(...args: OpArg[]): Tensor;
  tan(...args: OpArg[]): Tensor;
  tanh(...args: OpArg[]): Tensor;
  tanh_grad(...args: OpArg[]): Tensor;
  tanhGrad(...args: OpArg[]): Tensor;
  tile(...args: OpArg[]): Tensor;
  transpose(...args: OpArg[]): Tensor;
  var(...args: OpArg[]): Tensor;
  where(...args: OpArg[]): Tensor;
}

/** A tensor in the WebAssembly heap. */
export class Tensor {
  protected constructor();
  readonly shape: Shape;
  readonly dtype: DType;
  readonly rank: number;
  readonly size: number;
  readonly isDisposed: boolean;
  /**
   * A copy of the elements, once read (Uint8Array for bool; a float16 / bfloat16 tensor's values as a
   * Float32Array): works for a tensor on any device, including one read only asynchronously (a GPU buffer).
   */
  data(): Promise<TypedData>;
  /** data() now, for a tensor in the WebAssembly heap (a ValueError for a device that reads only asynchronously). */
  dataSync(): TypedData;
  /** The stored bits of a float16 / bfloat16 tensor (a copy); a ValueError for the other dtypes. */
  bits(): Uint16Array;
  /**
   * Nested arrays (a number or boolean for a 0-d tensor). The rank is not known to the types, so the result is
   * what you name, `t.toArray<number[][]>()`, and untyped (`any`) when you name nothing: `w.toArray().map(...)`
   * compiles, as NestedArray's union would not let it.
   */
  toArray<T extends NestedArray = any>(): T;
  /** The only element of a one-element tensor. */
  item(): number;
  toString(maxElements?: number): string;
  clone(): Tensor;
  /** Frees the memory now; idempotent. */
  dispose(): void;
  [Symbol.dispose](): void;
}
export interface Tensor extends TensorOps {}

/** A named tensor that grad differentiates through `weights`. */
export class Parameter extends Tensor {
  readonly name: string;
  requiresGrad: boolean;
  /** Replaces the values in place (same shape). */
  assign(value: Tensor | number | NestedArray): this;
}

export interface GradOptions {
  /** An int (one gradient), a list (an array of gradients) or null (weights only). Default 0. */
  gradPosition?: number | readonly number[] | null;
  weights?: readonly Parameter[];
  /** fn returns [output, ...aux]; the result is [grads, ...aux] ([value, grads] with value [output, ...aux] for valueAndGrad). */
  hasAux?: boolean;
  /** The last argument of the returned function is the cotangent of fn's output. */
  sensParam?: boolean;
  /** A fixed cotangent of fn's output (default: ones). */
  sens?: Tensor;
}

export type TensorArg = Tensor | number;
/** What a differentiated function returns: a tensor or (with hasAux) an array of tensors. */
export type FnResult = Tensor | FnResult[];
export type Fn = (...args: Tensor[]) => FnResult;
/** A tensor or nested arrays of tensors. */
export type GradResult = Tensor | GradResult[];
/** The gradients of the positions GradOptions.gradPosition names: one tensor for a number (the default 0), an array for a list. */
export type PositionGradients<O extends GradOptions> = O extends { gradPosition: readonly number[] } ? Tensor[] : Tensor;
/**
 * What grad returns for options O (MindSpore's grad): the positions' gradients; with weights (a non-empty list),
 * [positionGradients, weightGradients]; with gradPosition null, the weights' gradients only.
 */
export type Gradients<O extends GradOptions> = O extends { gradPosition: null }
  ? Tensor[]
  : O extends { weights: readonly [] }
    ? PositionGradients<O>
    : O extends { weights: readonly Parameter[] }
      ? [PositionGradients<O>, Tensor[]]
      : PositionGradients<O>;
/** grad's result: the gradients, or with hasAux [gradients, ...aux]. */
export type GradOutput<O extends GradOptions> = O extends { hasAux: true } ? [Gradients<O>, ...GradResult[]] : Gradients<O>;
/** valueAndGrad's value: fn's output, or with hasAux [output, ...aux]. */
export type ValueOutput<O extends GradOptions> = O extends { hasAux: true } ? [Tensor, ...GradResult[]] : Tensor;

/** Options of bp.jit (docs/jit.md). */
export interface Context {
  mode: 'graph' | 'pynative';
  device: string;
}

export interface JitOptions {
  /** Dead code, common subexpressions, constant folding, algebraic simplification (default true). */
  optimize?: boolean;
  /** Elementwise chains run as one loop (default true). */
  fuse?: boolean;
  /** Arguments whose values, not only shapes and dtypes, are part of the signature: constants of the graph. */
  staticArgnums?: number | number[];
  /** From this many traces on, each new one warns on stderr which argument changed (default 8; 0: never). */
  warnAfterTraces?: number;
  /** More traces than this is a ValueError (default 0: no limit). */
  maxTraces?: number;
}

/** One optimisation pass over the most recent graph: nodes before and after (for fusion: kernels per call). */
export interface JitPassRecord {
  pass: string;
  before: number;
  after: number;
}

/** What a jitted function has done so far (the core's JitStats). */
export interface JitStats {
  /** Signatures traced. */
  traces: number;
  /** Calls answered by replaying a cached graph. */
  replays: number;
  /** Calls under an open grad level (bp.grad(bp.jit(f))) run eagerly, where a jitted backward cannot be exact. */
  eagerCalls: number;
  /** Calls under an open grad level run as the graph and recorded as one op whose backward is a jitted vjp. */
  gradCalls: number;
  /** Of the most recent graph: nodes as traced, nodes after the passes, fused groups, kernel calls per replay. */
  nodesTraced: number;
  nodes: number;
  fusedGroups: number;
  kernels: number;
  /** Seconds spent tracing and optimising the most recent graph. */
  compileSeconds: number;
  /** Bytes of the buffers a replay uses for intermediate values (kept and reused across calls). */
  plannedBytes: number;
  /** What the same ops allocate eagerly, one tensor per op output. */
  eagerBytes: number;
  /** Parameter updates computed straight into the Parameter (the others are copied in after the nodes). */
  donatedUpdates: number;
  /** Values computed into the buffer of an elementwise input that dies at their op. */
  inPlace: number;
  passes: JitPassRecord[];
}

/** A value of a jitted graph: an argument, a captured constant, a live Parameter or a node's result. */
export interface JitGraphValue {
  id: number;
  shape: Shape;
  dtype: DType;
  kind: 'argument' | 'constant' | 'parameter' | 'node';
  /** For an argument: its position. */
  argument?: number;
  /** For a parameter: its name. */
  name?: string;
  /** For a constant: its first values (non-finite ones as "nan", "inf", "-inf"), and whether there are more. */
  values?: (number | string)[];
  truncated?: boolean;
  /** For a node's result: the node's index. */
  node?: number;
}

/** Format "bprop-jit-graph/1": a jitted function's optimised graph (docs/graph.md). */
export interface JitGraphExport {
  format: 'bprop-jit-graph/1';
  values: JitGraphValue[];
  /** In execution order; `group` is the fused group the node runs in (null: a kernel of its own). */
  nodes: { index: number; op: string; inputs: (number | null)[]; output: number; attrs: Record<string, unknown>;
    group: number | null; where: string }[];
  /** Consecutive nodes run as one loop. */
  groups: { id: number; nodes: number[] }[];
  /** Parameters the function assigns, after the nodes. */
  updates: { parameter: string; value: number }[];
  outputs: number[];
  passes: JitPassRecord[];
}

/**
 * A function from bp.jit: called like the function it was made from (tensor arguments; numbers and arrays become
 * tensors), it traces that function once per signature and replays the graph after.
 */
export interface JitFunction<R = any> {
  (...args: (TensorArg | NestedArray | TypedData)[]): R;
  /** The graph for these arguments' signature as text (traced now if it was not). */
  lower(...args: (TensorArg | NestedArray | TypedData)[]): string;
  /** The same graph as data, for viewers: nodes, fused groups, Parameter updates (docs/graph.md). */
  exportGraph(...args: (TensorArg | NestedArray | TypedData)[]): JitGraphExport;
  stats(): JitStats;
  /** Frees the graphs now (idempotent); later calls are a ValueError. A forgotten function is freed by the collector. */
  dispose(): void;
  readonly isDisposed: boolean;
  [Symbol.dispose](): void;
}

/** What bp.computeVectors returns for one value case: its results, or the message it raised. */
export interface ComputedCase {
  name: string;
  value?: Tensor;
  grads?: (Tensor | null)[];
  second?: (Tensor | null)[];
  error?: string;
}

export interface CheckResult {
  ok: boolean;
  maxAbsError: number;
  message: string;
}

export interface VectorResult {
  errors: string[];
  passed: number;
  failed: number;
  results: { name: string; passed: boolean; line: string; raised: string }[];
}

/** How one case of a vector file ended when run without its expectations. */
export interface VectorOutcome {
  name: string;
  /** 'ok', the kind of the bprop error it raised, or 'other' for an exception that is not a bprop error. */
  outcome: 'ok' | 'shape' | 'dtype' | 'value' | 'unknown_op' | 'memory' | 'other';
  /** The output's shape and dtype, when ok. */
  shape?: number[];
  dtype?: DType;
  /** The error's message, when not ok. */
  message?: string;
}

export interface VectorOutcomes {
  /** Reading problems of the file (its malformed cases are left out). */
  errors: string[];
  cases: VectorOutcome[];
}

export interface PrimitiveInfo {
  shapes: (Shape | null)[];
  dtypes: (DType | null)[];
  outShape: Shape;
  outDtype: DType;
}

export interface PrimitiveSpec {
  name: string;
  /** Input names (default ['x']) or their number. */
  inputs?: string[] | number;
  inferShape?: (...shapes: Shape[]) => Shape;
  inferDtype?: (...dtypes: DType[]) => DType;
  /** The forward kernel: the inputs' elements (copies) in, the output's elements out. Its last argument is a PrimitiveInfo. */
  forward: (...arrays: any[]) => ArrayLike<number>;
  /** (inputs..., out, dout) -> one gradient per input (null for none), written with ops; out is null with readsOut false. */
  bprop: (...tensors: Tensor[]) => (Tensor | null)[] | Tensor;
  /** false: bprop never reads out (it is passed null), so a recorded call does not keep its output alive. Default true. */
  readsOut?: boolean;
}

/** A module: subclass it with construct (and bprop for a custom backward operator). Instances are callable. */
export declare class Cell {
  constructor();
  construct(...inputs: Tensor[]): Tensor;
  bprop?(...tensors: Tensor[]): (Tensor | null)[] | Tensor;
  call(...inputs: TensorArg[]): Tensor;
  parametersAndNames(prefix?: string): [string, Parameter][];
  trainableParams(): Parameter[];
}
export interface Cell {
  (...inputs: TensorArg[]): Tensor;
}

export interface TensorOptions {
  shape?: Shape;
  dtype?: DType;
}
export interface DTypeOption {
  dtype?: DType;
}

// ---- nn, optim and checkpoints (web/nn.js, web/checkpoint.js) ----------------------------------------------

/** The tuples made of the first 0, 1, ... n elements of T. */
type Prefixes<T extends unknown[]> = T extends [infer H, ...infer R] ? [] | [H, ...Prefixes<R>] : [];
/**
 * A constructor taking the required arguments Req, then any leading part of MindSpore's optional positional
 * arguments Pos, then optionally an options object O naming any of them.
 */
export type NnConstructor<T, Req extends unknown[], Pos extends unknown[], O> = {
  new (...args: [...Req, ...Prefixes<Pos>]): T;
  new (...args: [...Req, ...Prefixes<Pos>, O]): T;
};

/** One int for both spatial axes, or [h, w]. */
export type Size2 = number | [number, number];
/** One int, [h, w], or [top, bottom, left, right]. */
export type Padding2d = number | [number, number] | [number, number, number, number];
export type Reduction = 'mean' | 'sum' | 'none';
export type InitializerName =
  | 'zeros'
  | 'ones'
  | 'normal'
  | 'uniform'
  | 'xavier_uniform'
  | 'xavier_normal'
  | 'he_normal'
  | 'he_uniform';

/** An initializer with its arguments; bp.nn.init.* make them. */
export interface Initializer {
  readonly name: InitializerName | 'constant' | 'tensor' | string;
  readonly seed?: number;
  readonly [arg: string]: unknown;
}
/** How to fill a new parameter: a MindSpore name, bp.nn.init.*(...), or the values themselves. */
export type InitializerArg = InitializerName | Initializer | Tensor | NestedArray | TypedData;

/** Initializers with MindSpore's names (snake_case and camelCase), seeded when a seed is given. */
export interface NnInit {
  zeros(): Initializer;
  ones(): Initializer;
  constant(value: number): Initializer;
  constant(options: { value: number }): Initializer;
  /** N(mean, sigma^2); sigma 0.01 by default. */
  normal(sigma?: number, mean?: number, seed?: number): Initializer;
  normal(options: { sigma?: number; mean?: number; seed?: number }): Initializer;
  /** U(-scale, scale); scale 0.07 by default. */
  uniform(scale?: number, seed?: number): Initializer;
  uniform(options: { scale?: number; seed?: number }): Initializer;
  xavierUniform(gain?: number, seed?: number): Initializer;
  xavierUniform(options: { gain?: number; seed?: number }): Initializer;
  xavier_uniform: NnInit['xavierUniform'];
  xavierNormal(gain?: number, seed?: number): Initializer;
  xavierNormal(options: { gain?: number; seed?: number }): Initializer;
  xavier_normal: NnInit['xavierNormal'];
  heNormal(negativeSlope?: number, mode?: 'fan_in' | 'fan_out', nonlinearity?: string, seed?: number): Initializer;
  heNormal(options: { negativeSlope?: number; mode?: 'fan_in' | 'fan_out'; nonlinearity?: string; seed?: number }): Initializer;
  he_normal: NnInit['heNormal'];
  heUniform: NnInit['heNormal'];
  he_uniform: NnInit['heNormal'];
}

/**
 * A module of bp.nn: subclass it, assign layers, Parameters and cells to properties, define construct.
 * Parameter paths ("fc1.weight") follow the property names.
 */
export interface NnCell extends Cell {
  /** Training mode (Dropout active, BatchNorm on batch statistics); true at first. */
  readonly training: boolean;
  /** Training (true) or evaluation (false) mode for this cell and every cell below it. */
  setTrain(mode?: boolean): this;
  set_train(mode?: boolean): this;
  /** Sets requiresGrad of every parameter below (the core's layers keep their state untrainable). */
  setGrad(requiresGrad?: boolean): this;
  set_grad(requiresGrad?: boolean): this;
  nameCells(): [string, Cell][];
  cellsAndNames(prefix?: string): [string, Cell][];
  /** Parameters with requiresGrad, each once. */
  trainableParams(): Parameter[];
  trainable_params(): Parameter[];
  parameters_and_names(prefix?: string): [string, Parameter][];
}

export interface Dense extends NnCell {
  readonly weight: Parameter;
  /** Undefined with hasBias false. */
  readonly bias: Parameter;
}
export interface Conv2d extends NnCell {
  readonly weight: Parameter;
  /** Only with hasBias. */
  readonly bias: Parameter;
}
export interface BatchNorm extends NnCell {
  readonly gamma: Parameter;
  readonly beta: Parameter;
  readonly movingMean: Parameter;
  readonly moving_mean: Parameter;
  readonly movingVariance: Parameter;
  readonly moving_variance: Parameter;
}
export interface LayerNorm extends NnCell {
  readonly gamma: Parameter;
  readonly beta: Parameter;
}
export interface Embedding extends NnCell {
  readonly embeddingTable: Parameter;
  readonly embedding_table: Parameter;
}
/** The optional arguments of one attention call, with PyTorch's conventions (bool masks: true = not attended). */
export interface AttentionCallOptions {
  /** (L, S) or (batch * heads, L, S): bool (true = masked out) or float (added to the scores). */
  attnMask?: Tensor | null;
  /** (batch, S): bool (true = padding) or float (added). */
  keyPaddingMask?: Tensor | null;
  isCausal?: boolean;
  /** Also return the attention weights (composed). Default false. */
  needWeights?: boolean;
  /** Weights averaged over the heads (default true), or per head. */
  averageAttnWeights?: boolean;
}
export interface AttentionResult {
  output: Tensor;
  /** Null unless needWeights. */
  weights: Tensor | null;
}
/** torch.nn.MultiheadAttention: in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias (PyTorch's keys). */
export interface MultiheadAttention extends NnCell {
  forward(query: Tensor, key: Tensor, value: Tensor, options?: AttentionCallOptions): AttentionResult;
}
/** torch.nn.TransformerEncoderLayer: self_attn, linear1, linear2, norm1, norm2. */
export interface TransformerEncoderLayer extends NnCell {
  /** attnMask is PyTorch's src_mask, keyPaddingMask its src_key_padding_mask. */
  forward(src: Tensor, options?: AttentionCallOptions): AttentionResult;
}
/** A decoder-only transformer (docs/transformers.md): call it with int32 ids (logits), or ids and targets (loss). */
export interface GPT extends NnCell {
  /** The ids sampled after `prompt`; the same for the same seed. temperature 0: greedy. */
  generate(prompt: ArrayLike<number>, options?: { tokens?: number; temperature?: number; topK?: number; seed?: number }): number[];
  /** One (batch, heads, T, T) tensor of self-attention weights per layer. */
  attentionWeights(ids: Tensor | ArrayLike<number>): Tensor[];
}
export interface SequentialCell extends NnCell, Iterable<Cell> {
  readonly length: number;
  append(cell: Cell): this;
  /** The i-th cell; negative i counts from the end. */
  at(i: number): Cell;
}
export interface WithLossCell extends NnCell {
  readonly backbone: Cell;
  readonly lossFn: (logits: Tensor, label: Tensor) => Tensor;
}
export interface TrainOneStepCell extends NnCell {
  readonly network: Cell;
  readonly optimizer: Optimizer;
}
export interface TrainOneStepWithLossScaleCell extends NnCell {
  readonly network: Cell;
  readonly optimizer: Optimizer;
  readonly scaler: LossScaler;
}

type LossTensor = Tensor | NestedArray | TypedData | null;

export interface Nn {
  /** Base class of JavaScript models. */
  readonly Cell: new () => NnCell;
  readonly Parameter: new (data: Tensor | number | NestedArray, name?: string, requiresGrad?: boolean) => Parameter;
  readonly Initializer: new (name: string, args?: { [arg: string]: number | string | undefined }) => Initializer;

  readonly Dense: NnConstructor<
    Dense,
    [inChannels: number, outChannels: number],
    [InitializerArg, InitializerArg, boolean, string | null, DType],
    { weightInit?: InitializerArg; biasInit?: InitializerArg; hasBias?: boolean; activation?: string | null; dtype?: DType }
  >;
  readonly Conv2d: NnConstructor<
    Conv2d,
    [inChannels: number, outChannels: number, kernelSize: Size2],
    [Size2, 'same' | 'valid' | 'pad', Padding2d, Size2, number, boolean, InitializerArg, InitializerArg, DType],
    {
      stride?: Size2;
      padMode?: 'same' | 'valid' | 'pad';
      padding?: Padding2d;
      dilation?: Size2;
      group?: number;
      hasBias?: boolean;
      weightInit?: InitializerArg;
      biasInit?: InitializerArg;
      dtype?: DType;
    }
  >;
  readonly MaxPool2d: NnConstructor<NnCell, [], [Size2, Size2, 'same' | 'valid' | 'pad', Padding2d], PoolOptions>;
  readonly AvgPool2d: NnConstructor<NnCell, [], [Size2, Size2, 'same' | 'valid' | 'pad', Padding2d], PoolOptions>;
  readonly BatchNorm1d: NnConstructor<BatchNorm, [numFeatures: number], BatchNormPositional, BatchNormOptions>;
  readonly BatchNorm2d: NnConstructor<BatchNorm, [numFeatures: number], BatchNormPositional, BatchNormOptions>;
  readonly LayerNorm: NnConstructor<
    LayerNorm,
    [normalizedShape: number | Shape],
    [InitializerArg, InitializerArg, number, DType],
    { gammaInit?: InitializerArg; betaInit?: InitializerArg; epsilon?: number; dtype?: DType }
  >;
  /** Seeded: the same seed gives the same masks. Identity in evaluation mode. */
  readonly Dropout: NnConstructor<NnCell, [], [number, number], { p?: number; seed?: number }>;
  readonly Embedding: NnConstructor<
    Embedding,
    [vocabSize: number, embeddingSize: number],
    [InitializerArg, number, DType],
    { embeddingTable?: InitializerArg; paddingIdx?: number; dtype?: DType }
  >;
  readonly Flatten: NnConstructor<NnCell, [], [number, number], { startDim?: number; endDim?: number }>;
  readonly MultiheadAttention: NnConstructor<
    MultiheadAttention,
    [embedDim: number, numHeads: number],
    [number, boolean, number | null, number | null, boolean, DType],
    { dropout?: number; bias?: boolean; kdim?: number | null; vdim?: number | null; batchFirst?: boolean; dtype?: DType }
  >;
  readonly TransformerEncoderLayer: NnConstructor<
    TransformerEncoderLayer,
    [dModel: number, nhead: number],
    [number, number, 'relu' | 'gelu', number, boolean, boolean, DType],
    {
      dimFeedforward?: number;
      dropout?: number;
      activation?: 'relu' | 'gelu';
      layerNormEps?: number;
      batchFirst?: boolean;
      normFirst?: boolean;
      dtype?: DType;
    }
  >;
  readonly GPT: NnConstructor<
    GPT,
    [],
    [number, number, number, number, number, number, boolean, DType],
    {
      vocabSize?: number;
      context?: number;
      layers?: number;
      heads?: number;
      width?: number;
      dropout?: number;
      tieWeights?: boolean;
      dtype?: DType;
    }
  >;
  readonly ReLU: new () => NnCell;
  readonly LeakyReLU: NnConstructor<NnCell, [], [number], { alpha?: number }>;
  /** approximate (default true): the tanh form, as MindSpore. */
  readonly GELU: NnConstructor<NnCell, [], [boolean], { approximate?: boolean }>;
  readonly SiLU: new () => NnCell;
  readonly Sigmoid: new () => NnCell;
  readonly Tanh: new () => NnCell;
  readonly Softmax: NnConstructor<NnCell, [], [number], { axis?: number }>;
  readonly LogSoftmax: NnConstructor<NnCell, [], [number], { axis?: number }>;

  readonly BCEWithLogitsLoss: NnConstructor<
    NnCell,
    [],
    [Reduction, LossTensor, LossTensor],
    { reduction?: Reduction; weight?: LossTensor; posWeight?: LossTensor }
  >;
  readonly BCELoss: NnConstructor<NnCell, [], [LossTensor, Reduction], { weight?: LossTensor; reduction?: Reduction }>;
  readonly CrossEntropyLoss: NnConstructor<
    NnCell,
    [],
    [LossTensor, number, Reduction, number],
    { weight?: LossTensor; ignoreIndex?: number; reduction?: Reduction; labelSmoothing?: number }
  >;
  readonly NLLLoss: NnConstructor<
    NnCell,
    [],
    [LossTensor, number, Reduction],
    { weight?: LossTensor; ignoreIndex?: number; reduction?: Reduction }
  >;
  readonly MSELoss: NnConstructor<NnCell, [], [Reduction], { reduction?: Reduction }>;
  readonly L1Loss: NnConstructor<NnCell, [], [Reduction], { reduction?: Reduction }>;
  readonly SmoothL1Loss: NnConstructor<NnCell, [], [number, Reduction], { beta?: number; reduction?: Reduction }>;

  readonly SequentialCell: {
    new (cells: Cell[]): SequentialCell;
    new (...cells: Cell[]): SequentialCell;
  };
  /** construct(...data, label) = lossFn(backbone(...data), label). */
  readonly WithLossCell: new (backbone: Cell, lossFn: (logits: Tensor, label: Tensor) => Tensor) => WithLossCell;
  /**
   * Each call: the loss, its gradients w.r.t. optimizer.parameters, the update; returns the loss before it. With
   * hasAux the network returns [loss, ...aux] and the call [loss, ...aux].
   */
  readonly TrainOneStepCell: new (network: Cell, optimizer: Optimizer, options?: { hasAux?: boolean }) => TrainOneStepCell;
  /**
   * Each call: the gradients of loss * scale, unscaled; the update only when all are finite; the scaler adjusts.
   * Returns [loss, overflow (0-d bool: the step was skipped), the scale used] (with hasAux, the network's aux
   * outputs after them).
   */
  readonly TrainOneStepWithLossScaleCell: new (
    network: Cell,
    optimizer: Optimizer,
    scaler: LossScaler,
    options?: { hasAux?: boolean },
  ) => TrainOneStepWithLossScaleCell;

  readonly init: NnInit;
  /** Seeds the stream initializers and Dropout draw from: the same seed gives the same weights, natively too. */
  setSeed(seed: number): void;
  set_seed(seed: number): void;
  /** A new tensor of `shape` filled by an initializer. */
  initializer(init: InitializerArg, shape: Shape, options?: DTypeOption): Tensor;
  /** The recommended gain of a nonlinearity (PyTorch's calculate_gain). */
  calculateGain(nonlinearity: string, param?: number): number;
}
interface PoolOptions {
  kernelSize?: Size2;
  stride?: Size2;
  padMode?: 'same' | 'valid' | 'pad';
  padding?: Padding2d;
}
type BatchNormPositional = [number, number, boolean, InitializerArg, InitializerArg, InitializerArg, InitializerArg, boolean | null, DType];
interface BatchNormOptions {
  eps?: number;
  /** moving = momentum * moving + (1 - momentum) * batch (MindSpore's convention); 0.9 by default. */
  momentum?: number;
  affine?: boolean;
  gammaInit?: InitializerArg;
  betaInit?: InitializerArg;
  movingMeanInit?: InitializerArg;
  movingVarInit?: InitializerArg;
  /** Unset: batch statistics in training, moving ones in evaluation. */
  useBatchStatistics?: boolean | null;
  dtype?: DType;
}

/** Updates parameters in place from one gradient per parameter (PyTorch's update rules). */
export interface Optimizer {
  readonly parameters: readonly Parameter[];
  readonly name: string;
  learningRate: number;
  readonly stepCount: number;
  /** One update; grads as valueAndGrad returns them for { gradPosition: null, weights: optimizer.parameters }. */
  step(grads: (Tensor | null)[]): void;
  /** The update only when applyIf (a 0-d bool tensor) is true; otherwise nothing changes, step counts included. */
  step(grads: (Tensor | null)[], applyIf: Tensor): void;
  applyGradients(grads: (Tensor | null)[]): void;
  /** Weight decay off for the parameters `excluded` picks (default: fewer than 2 dimensions, biases and norms). */
  excludeFromWeightDecay(excluded?: (p: Parameter) => boolean): this;
  updateCount(i: number): number;
  /** The state tensors of parameter i (momentum_buffer, exp_avg, exp_avg_sq, ...). */
  state(i: number): { [key: string]: Tensor };
}
export type AmpLevel = 'O0' | 'O1' | 'O2' | 'O3';
export type HalfDType = 'float16' | 'bfloat16';
/** Scales the loss before the backward and unscales the gradients after (the scale: a 0-d float32 Parameter). */
export interface LossScaler {
  scale(loss: Tensor): Tensor;
  unscale(grads: Tensor[]): Tensor[];
  /** Updates the scale after a step whose unscaled gradients were gradsFinite (a 0-d bool tensor). */
  adjust(gradsFinite: Tensor): void;
  readonly scaleValue: Parameter;
  readonly currentScale: number;
  /** The state to save with a checkpoint (GradScaler.state_dict): loss_scale, and loss_scale_finite_steps (dynamic). */
  state(): LossScalerState;
  /** Restores a state(): ValueError for a missing, unknown or invalid key (nothing changes then). */
  loadState(state: LossScalerState): void;
}
export interface LossScalerState {
  loss_scale: number;
  loss_scale_finite_steps?: number;
}
export interface DynamicLossScaler extends LossScaler {
  readonly scaleFactor: number;
  readonly scaleWindow: number;
  /** Finite steps since the scale last changed. */
  readonly counter: Parameter;
}
/** Mixed precision: MindSpore's amp levels and loss scalers, PyTorch's autocast as a scope. */
export interface Amp {
  /**
   * Runs fn with ops casting their inputs by level: O1 matmul/conv2d in dtype, norms/softmax/reductions/losses in
   * float32; O2 every float op in dtype but those; O3 every float op. float64 is never cast.
   */
  autocast<R>(level: AmpLevel, dtype: HalfDType, fn: () => R): R;
  /** The innermost open scope ('O0' when none). */
  state(): { level: AmpLevel; dtype: DType };
  /** Every call of cell under autocast(level, dtype), half outputs cast to float32; returns the cell. */
  autoMixedPrecision<C extends Cell>(cell: C, level?: AmpLevel, dtype?: HalfDType): C;
  auto_mixed_precision<C extends Cell>(cell: C, level?: AmpLevel, dtype?: HalfDType): C;
  /** A 0-d bool tensor: every element of every tensor is finite. */
  allFinite(tensors: Tensor[]): Tensor;
  all_finite(tensors: Tensor[]): Tensor;
  readonly LossScaler: abstract new (...args: never[]) => LossScaler;
  /** A fixed scale; adjust does nothing. */
  readonly StaticLossScaler: new (scaleValue: number) => LossScaler;
  /** Halves (by scaleFactor) on an overflow, doubles after scaleWindow finite steps. Defaults 65536, 2, 1000. */
  readonly DynamicLossScaler: new (scaleValue?: number, scaleFactor?: number, scaleWindow?: number) => DynamicLossScaler;
}

/** Sets an optimizer's learning rate per epoch. */
export interface LRScheduler {
  readonly optimizer: Optimizer;
  readonly lastEpoch: number;
  readonly baseLr: number;
  /** Advances one epoch; returns the new rate. */
  step(): number;
  getLastLr(): number;
  lrAt(epoch: number): number;
}
type Params = Parameter[] | readonly Parameter[] | Cell;
type AdamOptions = { learningRate?: number; lr?: number; betas?: [number, number]; beta1?: number; beta2?: number; eps?: number; weightDecay?: number; amsgrad?: boolean };

export interface Optim {
  readonly SGD: NnConstructor<
    Optimizer,
    [params: Params],
    [number, number, number, boolean, number],
    { learningRate?: number; lr?: number; momentum?: number; dampening?: number; nesterov?: boolean; weightDecay?: number }
  >;
  /** MindSpore's Momentum: learningRate and momentum are required. */
  readonly Momentum: NnConstructor<
    Optimizer,
    [params: Params],
    [number, number, number, boolean],
    { learningRate?: number; lr?: number; momentum?: number; weightDecay?: number; useNesterov?: boolean }
  >;
  readonly Adam: NnConstructor<Optimizer, [params: Params], [number, [number, number], number, number, boolean], AdamOptions>;
  /** Decoupled weight decay (0.01 by default). */
  readonly AdamW: NnConstructor<Optimizer, [params: Params], [number, [number, number], number, number, boolean], AdamOptions>;
  /** lr = baseLr * gamma ** floor(epoch / stepSize). */
  readonly StepLR: NnConstructor<LRScheduler, [optimizer: Optimizer], [number, number], { stepSize?: number; gamma?: number }>;
  /** lr = etaMin + (baseLr - etaMin) (1 + cos(pi epoch / tMax)) / 2. */
  readonly CosineAnnealingLR: NnConstructor<LRScheduler, [optimizer: Optimizer], [number, number], { tMax?: number; etaMin?: number }>;
  /** Per step: linear warmup to baseLr over warmupSteps, then cosine decay to etaMin at totalSteps (nanoGPT's). */
  readonly WarmupCosineLR: NnConstructor<LRScheduler, [optimizer: Optimizer], [number, number, number], { warmupSteps?: number; totalSteps?: number; etaMin?: number }>;
  /** The gradients scaled by clipNorm / max(globalNorm, clipNorm) (MindSpore's ops.clip_by_global_norm). */
  clipByGlobalNorm(grads: Tensor[], clipNorm?: number): { grads: Tensor[]; globalNorm: Tensor | null };
}

/** What saveCheckpoint writes: a cell's parameters, or named tensors. */
export type NamedTensorsArg =
  | Cell
  | Map<string, Tensor>
  | { [name: string]: Tensor }
  | ([string, Tensor] | { name: string; data: Tensor })[];
export type CheckpointBytes = Uint8Array | ArrayBuffer | ArrayBufferView;
export interface LoadOptions {
  /**
   * true (default): names must match exactly (the optimizer state a native training checkpoint carries, 'optimizer.*',
   * is not the model's and never counts as extra); false: missing parameters keep their values, extra tensors are ignored.
   */
  strict?: boolean;
  /** Names the checkpoint in error messages (default '<memory>'). */
  source?: string;
}

/** The API object returned by init(). */
export interface Bprop {
  readonly ShapeError: typeof ShapeError;
  readonly DTypeError: typeof DTypeError;
  readonly ValueError: typeof ValueError;
  readonly UnknownOpError: typeof UnknownOpError;
  readonly MemoryError: typeof MemoryError;
  readonly BpropError: typeof BpropError;
  readonly Tensor: typeof Tensor;
  readonly Parameter: new (data: Tensor | number | NestedArray, name?: string, requiresGrad?: boolean) => Parameter;
  readonly Cell: typeof Cell;
  /** Layers, losses, initializers and training cells (MindSpore's nn), backed by the core's nn library. */
  readonly nn: Nn;
  /** Optimizers and learning-rate schedules. */
  readonly optim: Optim;
  /** Mixed precision (float16 / bfloat16). */
  readonly amp: Amp;
  /** Every registered op (catalogue ops and registered primitives), attributes as options. */
  readonly ops: { [K in OpName]: (...args: OpArg[]) => Tensor } & { [name: string]: (...args: OpArg[]) => Tensor };

  /** float16 / bfloat16 data: numbers (rounded to nearest even), or a Uint16Array of the bits themselves. */
  tensor(data: NestedArray | TypedData | Uint16Array | Tensor, options?: TensorOptions): Tensor;
  scalar(value: number, dtype?: DType): Tensor;
  zeros(shape: Shape, options?: DTypeOption): Tensor;
  ones(shape: Shape, options?: DTypeOption): Tensor;
  full(shape: Shape, value: number, options?: DTypeOption): Tensor;
  zerosLike(t: Tensor): Tensor;
  onesLike(t: Tensor): Tensor;
  arange(stop: number, options?: DTypeOption): Tensor;
  arange(start: number, stop: number, step?: number, options?: DTypeOption): Tensor;
  linspace(start: number, stop: number, num: number, options?: DTypeOption): Tensor;
  eye(n: number, options?: DTypeOption): Tensor;
  randn(shape: Shape, options?: number | { seed?: number; dtype?: DType }): Tensor;
  rand(shape: Shape, options?: number | { seed?: number; low?: number; high?: number; dtype?: DType }): Tensor;

  callOp(name: string, inputs: (TensorArg | null)[], attrs?: { [name: string]: AttrValue }): Tensor;
  opNames(): string[];
  stopGradient(x: Tensor): Tensor;

  /** The result's type follows the options: see Gradients and GradOutput. */
  grad<const O extends GradOptions = {}>(fn: Fn, options?: O): (...args: TensorArg[]) => GradOutput<O>;
  /** [value, gradients]; value is fn's output ([output, ...aux] with hasAux). */
  valueAndGrad<const O extends GradOptions = {}>(
    fn: Fn,
    options?: O,
  ): (...args: TensorArg[]) => [ValueOutput<O>, Gradients<O>];
  vjp(fn: Fn, inputs: TensorArg[], v: TensorArg): [Tensor, Tensor[]];
  jvp(fn: Fn, inputs: TensorArg[], tangents: TensorArg[]): [Tensor, Tensor];
  /** The forward ops and backward steps autodiff records for fn at inputs (docs/graph.md). */
  exportGraph(fn: Fn, inputs: TensorArg[], options?: { names?: string[]; maxValues?: number }): GradGraph;
  jacrev(fn: Fn, options?: { argnum?: number }): (...args: TensorArg[]) => Tensor;
  jacfwd(fn: Fn, options?: { argnum?: number }): (...args: TensorArg[]) => Tensor;
  hessian(fn: Fn, options?: { argnum?: number }): (...args: TensorArg[]) => Tensor;
  gradcheck(fn: Fn, inputs: TensorArg[], options?: { eps?: number; atol?: number; rtol?: number; order?: 1 | 2 }): CheckResult;
  noGrad<T>(fn: () => T): T;
  /**
   * Graph mode: fn traced once per signature (argument shapes and dtypes) into a graph, the backward operators of
   * any grad inside it included, and replayed on later calls; results are bit-identical to eager.
   */
  jit<F extends (...args: any[]) => any>(fn: F, options?: JitOptions): JitFunction<ReturnType<F>>;
  /**
   * MindSpore's set_context: in 'graph' mode the functions grad and valueAndGrad return, and Cells called with
   * tensors, compile themselves with jit on first use (outside any trace or grad level); 'pynative' (the default)
   * runs them op by op. `device`: where new tensors go ('cpu', or a device this build has). Omitted fields keep
   * their values.
   */
  setContext(context: Partial<Context>): void;
  getContext(): Context;
  registerPrimitive(spec: PrimitiveSpec): void;
  /** Runs a vector file through the core's runner; with jit, each case traced and replayed (`bprop check --jit`). */
  runVectors(text: string, path?: string, options?: { jit?: boolean }): VectorResult;
  /** What every value case computes (value, gradients, second order), eagerly or through jit, before any comparison. */
  computeVectors(text: string, path?: string, options?: { jit?: boolean }): { errors: string[]; cases: ComputedCase[] };
  /** Runs every case (and its first-order gradients when it has wrt names) without comparing to expectations. */
  vectorOutcomes(text: string, path?: string): VectorOutcomes;

  /** The bytes of a safetensors checkpoint of a cell's parameters (state included) or of named tensors. */
  saveCheckpoint(obj: NamedTensorsArg, options?: { metadata?: { [key: string]: string } }): Uint8Array;
  /** Checks names, shapes and dtypes, then loads into the cell's parameters (all or nothing); returns the names not loaded. */
  loadCheckpoint(cell: Cell, bytes: CheckpointBytes, options?: LoadOptions): string[];
  /** The tensors (new, in file order) and metadata of checkpoint bytes. */
  parseCheckpoint(bytes: CheckpointBytes, options?: { source?: string }): { tensors: Map<string, Tensor>; metadata: { [key: string]: string } };
  /** MindSpore's load_param_into_net: named tensors into the cell's parameters, as loadCheckpoint. */
  loadParamIntoNet(cell: Cell, tensors: NamedTensorsArg, options?: LoadOptions): string[];

  /**
   * Live tensors and their bytes; the WebAssembly heap's size (it never shrinks, so this is also its high-water
   * mark) and the bytes allocated in it now (tensors, graphs, cells: what a leak check watches).
   */
  memory(): { tensors: number; bytes: number; heapBytes: number; heapUsed: number };
  /**
   * The float32 GEMM kernel: 'relaxed-simd' (fused multiply-add, where the engine has WebAssembly relaxed SIMD:
   * Chrome 114+, Node 22+, Node 20 with --experimental-wasm-relaxed-simd) or 'simd128'.
   */
  readonly gemmKernel: 'relaxed-simd' | 'simd128';
  tidy<T>(fn: () => T): T;
  scope<T>(fn: () => Promise<T>): Promise<T>;
  keep<T extends Tensor>(t: T): T;
}

/** Where init() gets the WebAssembly binary, when not from next to the package's entry (the default). */
export interface InitOptions {
  /** The URL the binary is served from (relative URLs resolve against the page). */
  wasmUrl?: string | URL;
  /** The binary's bytes. */
  wasmBinary?: ArrayBuffer | ArrayBufferView;
}

/**
 * Loads the WebAssembly module (once) and returns the API. Options apply to the first call; a later call
 * with other options is refused with a ValueError.
 */
export function init(options?: InitOptions): Promise<Bprop>;
