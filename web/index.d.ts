// Type declarations of the bprop package (web/index.js).

/** Element types: float32, float64, int32, bool. */
export type DType = 'float32' | 'float64' | 'int32' | 'bool';
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
  readonly kind: 'shape' | 'dtype' | 'value' | 'unknown_op' | 'internal' | string;
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

/** Every op of the catalogue, by its catalogue name and its camelCase alias. */
export type OpName =
  | 'abs'
  | 'add'
  | 'amax'
  | 'amin'
  | 'argmax'
  | 'argmin'
  | 'atan2'
  | 'avg_pool2d'
  | 'avgPool2d'
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
  | 'cos'
  | 'cross_entropy'
  | 'crossEntropy'
  | 'div'
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
  | 'gelu'
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
  | 'max_pool2d'
  | 'maxPool2d'
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
  | 'reciprocal'
  | 'relu'
  | 'reshape'
  | 'round'
  | 'rsqrt'
  | 'sigmoid'
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
  | 'sub'
  | 'sum'
  | 'tan'
  | 'tanh'
  | 'tile'
  | 'transpose'
  | 'var'
  | 'where';

/** Chainable op methods: x.mul(y).sum({ axis: 0 }); the tensor is the op's first input. */
export interface TensorOps {
  abs(...args: OpArg[]): Tensor;
  add(...args: OpArg[]): Tensor;
  amax(...args: OpArg[]): Tensor;
  amin(...args: OpArg[]): Tensor;
  argmax(...args: OpArg[]): Tensor;
  argmin(...args: OpArg[]): Tensor;
  atan2(...args: OpArg[]): Tensor;
  avg_pool2d(...args: OpArg[]): Tensor;
  avgPool2d(...args: OpArg[]): Tensor;
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
  conv2d(...args: OpArg[]): Tensor;
  cos(...args: OpArg[]): Tensor;
  cross_entropy(...args: OpArg[]): Tensor;
  crossEntropy(...args: OpArg[]): Tensor;
  div(...args: OpArg[]): Tensor;
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
  gelu(...args: OpArg[]): Tensor;
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
  max_pool2d(...args: OpArg[]): Tensor;
  maxPool2d(...args: OpArg[]): Tensor;
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
  reciprocal(...args: OpArg[]): Tensor;
  relu(...args: OpArg[]): Tensor;
  reshape(...args: OpArg[]): Tensor;
  round(...args: OpArg[]): Tensor;
  rsqrt(...args: OpArg[]): Tensor;
  sigmoid(...args: OpArg[]): Tensor;
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
  std(...args: OpArg[]): Tensor;
  stop_gradient(...args: OpArg[]): Tensor;
  stopGradient(...args: OpArg[]): Tensor;
  strided_slice(...args: OpArg[]): Tensor;
  stridedSlice(...args: OpArg[]): Tensor;
  sub(...args: OpArg[]): Tensor;
  sum(...args: OpArg[]): Tensor;
  tan(...args: OpArg[]): Tensor;
  tanh(...args: OpArg[]): Tensor;
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
  /** A copy of the elements (Uint8Array for bool). */
  data(): TypedData;
  /** Nested arrays (a number or boolean for a 0-d tensor). */
  toArray(): NestedArray;
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
  gradPosition?: number | number[] | null;
  weights?: Parameter[];
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
  /** (inputs..., out, dout) -> one gradient per input (null for none), written with ops. */
  bprop: (...tensors: Tensor[]) => (Tensor | null)[] | Tensor;
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

/** The API object returned by init(). */
export interface Bprop {
  readonly ShapeError: typeof ShapeError;
  readonly DTypeError: typeof DTypeError;
  readonly ValueError: typeof ValueError;
  readonly UnknownOpError: typeof UnknownOpError;
  readonly BpropError: typeof BpropError;
  readonly Tensor: typeof Tensor;
  readonly Parameter: new (data: Tensor | number | NestedArray, name?: string, requiresGrad?: boolean) => Parameter;
  readonly Cell: typeof Cell;
  /** Every registered op (catalogue ops and registered primitives), attributes as options. */
  readonly ops: { [K in OpName]: (...args: OpArg[]) => Tensor } & { [name: string]: (...args: OpArg[]) => Tensor };

  tensor(data: NestedArray | TypedData | Tensor, options?: TensorOptions): Tensor;
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

  grad(fn: Fn, options?: GradOptions): (...args: TensorArg[]) => any;
  valueAndGrad(fn: Fn, options?: GradOptions): (...args: TensorArg[]) => any;
  vjp(fn: Fn, inputs: TensorArg[], v: TensorArg): [Tensor, Tensor[]];
  jvp(fn: Fn, inputs: TensorArg[], tangents: TensorArg[]): [Tensor, Tensor];
  jacrev(fn: Fn, options?: { argnum?: number }): (...args: TensorArg[]) => Tensor;
  jacfwd(fn: Fn, options?: { argnum?: number }): (...args: TensorArg[]) => Tensor;
  hessian(fn: Fn, options?: { argnum?: number }): (...args: TensorArg[]) => Tensor;
  gradcheck(fn: Fn, inputs: TensorArg[], options?: { eps?: number; atol?: number; rtol?: number; order?: 1 | 2 }): CheckResult;
  noGrad<T>(fn: () => T): T;
  registerPrimitive(spec: PrimitiveSpec): void;
  runVectors(text: string, path?: string): VectorResult;

  memory(): { tensors: number; bytes: number };
  tidy<T>(fn: () => T): T;
  scope<T>(fn: () => Promise<T>): Promise<T>;
  keep<T extends Tensor>(t: T): T;
}

/** Loads the WebAssembly module (once) and returns the API. */
export function init(): Promise<Bprop>;
