// bp.nn and bp.optim: the C++ core's nn library from JavaScript, with MindSpore's names.
//
//   class Net extends bp.nn.Cell {
//     constructor() {
//       super();
//       this.fc1 = new bp.nn.Dense(2, 32, { activation: 'relu' });
//       this.fc2 = new bp.nn.Dense(32, 3);
//     }
//     construct(x) { return this.fc2(this.fc1(x)); }
//   }
//   const net = new Net();
//   const loss = new bp.nn.WithLossCell(net, new bp.nn.CrossEntropyLoss());
//   const step = new bp.nn.TrainOneStepCell(loss, new bp.optim.Adam(net.trainableParams(), { learningRate: 0.01 }));
//   bp.tidy(() => step(x, labels).item());
//
// Layers, losses and optimizers are objects of the core (a Dense here is the Dense of a native build) held by
// JavaScript wrappers; their parameters are bp.Parameter objects sharing the core's storage, so grad with
// weights, optimizers and checkpoints all see the same tensors. A JavaScript Cell holds layers, Parameters
// and other cells as properties; parameter paths ("fc1.weight") follow the properties' names.
//
// Constructors take MindSpore's positional arguments, and an options object last with any of them by their
// camelCase (or snake_case) names: new bp.nn.Conv2d(1, 8, 3, { padMode: 'pad', padding: 1 }).

import { camel, isPlainObject, weakCallback } from './util.js';

/**
 * Returns r, or throws the error the module recorded when r is undefined (a JavaScript callback's own error, such
 * as one thrown in a JavaScript cell that a core training cell ran, as it was thrown).
 */
export function nnCheck(bp, r) {
  if (r !== undefined) return r;
  return bp._fail();
}

function hidden(obj, key, value) {
  Object.defineProperty(obj, key, { value, writable: true, configurable: true, enumerable: false });
}

/** Frees module objects (cells, optimizers, schedules) whose JavaScript wrappers were collected. */
const nativeObjects =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry((handle) => {
        if (!handle.isDeleted()) handle.delete();
      })
    : null;

/**
 * Merges positional arguments (in the order of `names`) and a trailing options object into one object of
 * camelCase names. Options may use snake_case, `aliases`, and the names in `extra` (options only).
 */
function collectArgs(bp, who, argv, { names = [], extra = [], aliases = {} } = {}) {
  let positional = argv;
  let options = {};
  if (argv.length && isPlainObject(argv[argv.length - 1])) {
    options = argv[argv.length - 1];
    positional = argv.slice(0, -1);
  }
  if (positional.length > names.length) {
    throw new bp.ValueError(
      `${who}: expected at most ${names.length} positional arguments (${names.join(', ') || 'none'}), ` +
        `got ${positional.length}`,
    );
  }
  const out = {};
  positional.forEach((v, i) => {
    if (v !== undefined) out[names[i]] = v;
  });
  const known = [...names, ...extra];
  for (const [k, v] of Object.entries(options)) {
    const key = aliases[k] ?? camel(k);
    if (!known.includes(key)) {
      throw new bp.ValueError(`${who}: unknown option '${k}' (expected ${known.join(', ') || 'none'})`);
    }
    if (v === undefined) continue;
    if (key in out) throw new bp.ValueError(`${who}: ${key} is given twice`);
    out[key] = v;
  }
  return out;
}

// ---- initializers --------------------------------------------------------------------------------------

/**
 * How to fill a new parameter, by MindSpore name with its arguments (sigma, mean, scale, gain, value,
 * negativeSlope, mode, nonlinearity) and an optional seed; "tensor" for given values.
 */
export class Initializer {
  constructor(name, args = {}) {
    this.name = name;
    for (const [k, v] of Object.entries(args)) if (v !== undefined) this[k] = v;
  }
}

const INIT_ARGS = {
  zeros: [],
  ones: [],
  constant: ['value'],
  normal: ['sigma', 'mean', 'seed'],
  uniform: ['scale', 'seed'],
  xavier_uniform: ['gain', 'seed'],
  xavier_normal: ['gain', 'seed'],
  he_normal: ['negativeSlope', 'mode', 'nonlinearity', 'seed'],
  he_uniform: ['negativeSlope', 'mode', 'nonlinearity', 'seed'],
};

/** What the module reads for an initializer argument: a name, or an object with tensors as handles. */
function initArg(bp, who, key, v, temps) {
  if (typeof v === 'string') return v;
  if (v instanceof bp.Tensor) return { name: 'tensor', tensor: v.handle };
  if (Array.isArray(v) || ArrayBuffer.isView(v)) {
    const t = bp.tensor(v);
    temps.push(t);
    return { name: 'tensor', tensor: t.handle };
  }
  if (v instanceof Initializer || isPlainObject(v)) {
    const out = {};
    for (const [k, x] of Object.entries(v)) {
      if (k === 'tensor') out.tensor = initArg(bp, who, key, x, temps).tensor;
      else out[camel(k)] = x;
    }
    return out;
  }
  throw new bp.ValueError(`${who}: ${key} must be an initializer name, bp.nn.init.*(...) or a tensor`);
}

/** Converts collected arguments for the module: tensors to handles, initializers to descriptors. */
function nativeArgs(bp, who, args, { tensors = [], inits = [] }, temps) {
  const out = {};
  for (const [k, v] of Object.entries(args)) {
    if (v === null) continue;
    if (tensors.includes(k)) {
      const t = bp._asTensor(v);
      if (t !== v) temps.push(t);
      out[k] = t.handle;
    } else if (inits.includes(k)) {
      out[k] = initArg(bp, who, k, v, temps);
    } else {
      out[k] = v;
    }
  }
  return out;
}

// ---- layer and loss specifications ----------------------------------------------------------------------

const POOL = { names: ['kernelSize', 'stride', 'padMode', 'padding'] };
const BATCH_NORM = {
  names: [
    'numFeatures',
    'eps',
    'momentum',
    'affine',
    'gammaInit',
    'betaInit',
    'movingMeanInit',
    'movingVarInit',
    'useBatchStatistics',
    'dtype',
  ],
  inits: ['gammaInit', 'betaInit', 'movingMeanInit', 'movingVarInit'],
};
const NO_ARGS = { names: [] };

/** Every layer and loss of the core: positional argument names, and which take tensors or initializers. */
const LAYERS = {
  Dense: {
    names: ['inChannels', 'outChannels', 'weightInit', 'biasInit', 'hasBias', 'activation', 'dtype'],
    inits: ['weightInit', 'biasInit'],
  },
  Conv2d: {
    names: [
      'inChannels',
      'outChannels',
      'kernelSize',
      'stride',
      'padMode',
      'padding',
      'dilation',
      'group',
      'hasBias',
      'weightInit',
      'biasInit',
      'dtype',
    ],
    inits: ['weightInit', 'biasInit'],
  },
  MaxPool2d: POOL,
  AvgPool2d: POOL,
  BatchNorm1d: BATCH_NORM,
  BatchNorm2d: BATCH_NORM,
  LayerNorm: {
    names: ['normalizedShape', 'gammaInit', 'betaInit', 'epsilon', 'dtype'],
    inits: ['gammaInit', 'betaInit'],
  },
  Dropout: { names: ['p', 'seed'] },
  Embedding: {
    names: ['vocabSize', 'embeddingSize', 'embeddingTable', 'paddingIdx', 'dtype'],
    inits: ['embeddingTable'],
  },
  Flatten: { names: ['startDim', 'endDim'] },
  ReLU: NO_ARGS,
  LeakyReLU: { names: ['alpha'] },
  GELU: { names: ['approximate'] },
  SiLU: NO_ARGS,
  Sigmoid: NO_ARGS,
  Tanh: NO_ARGS,
  Softmax: { names: ['axis'] },
  LogSoftmax: { names: ['axis'] },
  MultiheadAttention: { names: ['embedDim', 'numHeads', 'dropout', 'bias', 'kdim', 'vdim', 'batchFirst', 'dtype'] },
  TransformerEncoderLayer: {
    names: ['dModel', 'nhead', 'dimFeedforward', 'dropout', 'activation', 'layerNormEps', 'batchFirst', 'normFirst', 'dtype'],
  },
  GPT: { names: ['vocabSize', 'context', 'layers', 'heads', 'width', 'dropout', 'tieWeights', 'dtype'] },
  BCEWithLogitsLoss: { names: ['reduction', 'weight', 'posWeight'], tensors: ['weight', 'posWeight'] },
  BCELoss: { names: ['weight', 'reduction'], tensors: ['weight'] },
  CrossEntropyLoss: { names: ['weight', 'ignoreIndex', 'reduction', 'labelSmoothing'], tensors: ['weight'] },
  NLLLoss: { names: ['weight', 'ignoreIndex', 'reduction'], tensors: ['weight'] },
  MSELoss: { names: ['reduction'] },
  L1Loss: { names: ['reduction'] },
  SmoothL1Loss: { names: ['beta', 'reduction'] },
};

const OPTIMIZERS = {
  SGD: { names: ['learningRate', 'momentum', 'dampening', 'nesterov', 'weightDecay'], aliases: { lr: 'learningRate' } },
  Momentum: { names: ['learningRate', 'momentum', 'weightDecay', 'useNesterov'], aliases: { lr: 'learningRate' } },
  Adam: {
    names: ['learningRate', 'betas', 'eps', 'weightDecay', 'amsgrad'],
    extra: ['beta1', 'beta2'],
    aliases: { lr: 'learningRate' },
  },
  AdamW: {
    names: ['learningRate', 'betas', 'eps', 'weightDecay', 'amsgrad'],
    extra: ['beta1', 'beta2'],
    aliases: { lr: 'learningRate' },
  },
};

const SCHEDULES = {
  StepLR: { names: ['stepSize', 'gamma'] },
  CosineAnnealingLR: { names: ['tMax', 'etaMin'], aliases: { T_max: 'tMax' } },
  WarmupCosineLR: { names: ['warmupSteps', 'totalSteps', 'etaMin'] },
};

// ---- the namespaces ------------------------------------------------------------------------------------

/** Builds bp.nn and bp.optim for one API object. `Tensor` and `Parameter` are the package's classes. */
export function makeNn(bp, { Tensor, Parameter }) {
  const mod = bp._mod;
  const check = (r) => nnCheck(bp, r);
  const BaseCell = bp.Cell;

  /**
   * A module (MindSpore's nn.Cell): subclass it, assign layers, Parameters and cells to properties in the
   * constructor, and define construct(...inputs) (and bprop for a custom backward operator). Parameters are
   * found through the properties, in definition order, with dotted paths.
   */
  class Cell extends BaseCell {
    constructor() {
      super();
      hidden(this, '_training', true);
    }
    /** Whether the cell is in training mode (Dropout active, BatchNorm on batch statistics). */
    get training() {
      return this._training;
    }
    /** Training (true) or evaluation (false) mode, for this cell and every cell below it. */
    setTrain(mode = true) {
      this._training = !!mode;
      for (const [, c] of this.nameCells()) if (typeof c.setTrain === 'function') c.setTrain(mode);
      return this;
    }
    /** Sets requiresGrad of every parameter below this cell (the core's layers keep their state untrainable). */
    setGrad(requiresGrad = true) {
      for (const v of Object.values(this)) {
        if (v instanceof Parameter) v.requiresGrad = !!requiresGrad;
        else if (v instanceof BaseCell && typeof v.setGrad === 'function') v.setGrad(requiresGrad);
      }
      return this;
    }
    /** The direct sub-cells with their property names. */
    nameCells() {
      return Object.entries(this).filter(([, v]) => v instanceof BaseCell);
    }
    /** Every cell below this one with its dotted path, depth first. */
    cellsAndNames(prefix = '') {
      const out = [];
      for (const [name, c] of this.nameCells()) {
        out.push([prefix + name, c]);
        if (typeof c.cellsAndNames === 'function') out.push(...c.cellsAndNames(`${prefix}${name}.`));
      }
      return out;
    }
    /** Parameters with requiresGrad, in order; a parameter reachable under several names is listed once. */
    trainableParams() {
      const seen = new Set();
      const out = [];
      for (const [, p] of this.parametersAndNames()) {
        if (p.requiresGrad && !seen.has(p)) {
          seen.add(p);
          out.push(p);
        }
      }
      return out;
    }
    trainable_params() {
      return this.trainableParams();
    }
    parameters_and_names(prefix = '') {
      return this.parametersAndNames(prefix);
    }
    set_train(mode = true) {
      return this.setTrain(mode);
    }
    set_grad(requiresGrad = true) {
      return this.setGrad(requiresGrad);
    }
  }

  /** A layer or loss of the core behind a Cell: construct runs the core's cell. */
  class NativeCell extends Cell {
    constructor(kind, argv) {
      super();
      const spec = LAYERS[kind];
      const args = collectArgs(bp, kind, argv, spec);
      const temps = [];
      let handle;
      try {
        handle = check(mod.nnMakeCell(kind, nativeArgs(bp, kind, args, spec, temps)));
      } finally {
        for (const t of temps) t.dispose();
      }
      hidden(this, '_native', handle);
      hidden(this, '_kind', kind);
      if (nativeObjects) nativeObjects.register(this, handle);
      const params = check(mod.nnCellParameters(handle)).map(([name, h]) => [name, new Parameter(bp, h)]);
      hidden(this, '_params', params);
      // dense.weight, bn.movingMean / bn.moving_mean: the core's parameters by name.
      for (const [name, p] of params) {
        if (name.includes('.')) continue;
        for (const key of new Set([name, camel(name)])) if (!(key in this)) hidden(this, key, p);
      }
    }
    construct(...inputs) {
      if (bp._tracing) bp._locate();  // the core's ops of the cell: marked with the line calling it
      return bp._withArgs(inputs, (_, handles) => bp._wrapValue(check(mod.nnCellCall(this._native, handles))));
    }
    parametersAndNames(prefix = '') {
      return this._params.map(([name, p]) => [prefix + name, p]);
    }
    setTrain(mode = true) {
      check(mod.nnCellSetTrain(this._native, !!mode));
      return super.setTrain(mode);
    }
    setGrad(requiresGrad = true) {
      check(mod.nnCellSetGrad(this._native, !!requiresGrad));
      return this;
    }
    toString() {
      return `${this._kind}()`;
    }
  }

  const nn = { Cell, Parameter: bp.Parameter, Initializer };
  for (const kind of Object.keys(LAYERS)) {
    // A named class per layer: new bp.nn.Dense(2, 3) instanceof bp.nn.Dense, and its name is "Dense".
    nn[kind] = {
      [kind]: class extends NativeCell {
        constructor(...argv) {
          super(kind, argv);
        }
      },
    }[kind];
  }

  // The transformer layers' calls with PyTorch's options: forward(...) returns { output, weights }.
  const ATTENTION_CALL = { names: [], extra: ['attnMask', 'keyPaddingMask', 'isCausal', 'needWeights', 'averageAttnWeights'] };
  function attentionForward(cell, who, tensors, options) {
    const o = collectArgs(bp, who, [options ?? {}], ATTENTION_CALL);
    const masks = [o.attnMask, o.keyPaddingMask].map((m) => (m === undefined || m === null ? null : bp._asTensor(m)));
    const inputs = tensors.map((t) => bp._asTensor(t));
    try {
      const [out, w] = check(
        mod.nnAttentionForward(
          cell._native,
          inputs.map((t) => t.handle),
          masks.map((m) => (m ? m.handle : null)),
          !!o.isCausal,
          !!o.needWeights,
          o.averageAttnWeights ?? true,
        ),
      );
      return { output: bp._wrapValue(out), weights: w === null ? null : bp._wrapValue(w) };
    } finally {
      for (const [t, given] of [...inputs.map((t, i) => [t, tensors[i]]), ...masks.map((m, i) => [m, i ? o.keyPaddingMask : o.attnMask])]) {
        if (t && t !== given) t.dispose();
      }
    }
  }
  /** forward(query, key, value, { attnMask, keyPaddingMask, isCausal, needWeights, averageAttnWeights }). */
  nn.MultiheadAttention.prototype.forward = function forward(query, key, value, options) {
    return attentionForward(this, 'MultiheadAttention.forward', [query, key, value], options);
  };
  /** forward(src, { attnMask (the src_mask), keyPaddingMask, isCausal, needWeights }). */
  nn.TransformerEncoderLayer.prototype.forward = function forward(src, options) {
    return attentionForward(this, 'TransformerEncoderLayer.forward', [src], options);
  };
  /** The ids sampled after `prompt` (an array of ids): { tokens = 100, temperature = 1, topK = 0, seed = 0 }. */
  nn.GPT.prototype.generate = function generate(prompt, options = {}) {
    const o = collectArgs(bp, 'GPT.generate', [options], { names: [], extra: ['tokens', 'temperature', 'topK', 'seed'] });
    return check(
      mod.nnGptGenerate(this._native, Array.from(prompt), o.tokens ?? 100, o.temperature ?? 1, o.topK ?? 0, o.seed ?? 0),
    );
  };
  /** The self-attention weights of every block for int32 ids: one (B, heads, T, T) tensor per layer. */
  nn.GPT.prototype.attentionWeights = function attentionWeights(ids) {
    const t = ids instanceof Tensor ? ids : bp.tensor(ids, { dtype: 'int32' });
    try {
      return check(mod.nnGptAttentionWeights(this._native, t.handle)).map((h) => bp._wrapValue(h));
    } finally {
      if (t !== ids) t.dispose();
    }
  };

  // ---- the core's containers and training cells ----
  // SequentialCell, WithLossCell and the training cells run the core's. Each part is a JsCell of the core that
  // calls the part back as JavaScript calls it (so its mixed precision, graph mode and trace locations apply, a
  // layer of the core's included), through a weak path: the module, a garbage-collection root, must not keep the
  // part alive; the part holds the path's target.

  /** make(coreCells) with a core cell for each of `parts`; the JsCells made for it are released after. */
  function withCoreCells(parts, make) {
    const made = [];
    try {
      const cores = parts.map((c) => {
        if (!c._coreTarget) hidden(c, '_coreTarget', { callback: bp._callback((...xs) => c(...xs)) });
        const h = check(mod.nnJsCell(weakCallback(bp, c._coreTarget, 'bprop.nn: the cell has been collected')));
        made.push(h);
        return h;
      });
      return make(cores);
    } finally {
      for (const h of made) h.delete();  // (the container keeps its own reference)
    }
  }
  function setCore(cell, handle) {
    hidden(cell, '_core', handle);
    if (nativeObjects) nativeObjects.register(cell, handle, cell);
  }
  function releaseCore(cell) {
    if (!cell._core) return;
    if (nativeObjects) nativeObjects.unregister(cell);
    cell._core.delete();
    cell._core = null;
  }
  function callCore(core, inputs) {
    return bp._withArgs(inputs, (_, handles) => bp._wrapValue(check(mod.nnCellCall(core, handles))));
  }

  /** Runs its cells in order (MindSpore's SequentialCell); they are named "0", "1", ... */
  class SequentialCell extends Cell {
    constructor(...cells) {
      super();
      hidden(this, '_cells', []);
      const list = cells.length === 1 && Array.isArray(cells[0]) ? cells[0] : cells;
      for (const c of list) this.append(c);
    }
    append(cell) {
      if (!(cell instanceof BaseCell)) throw new bp.ValueError('SequentialCell: append expects a cell');
      this[String(this._cells.length)] = cell;
      this._cells.push(cell);
      releaseCore(this);  // (made again, with the new cell, by the next call)
      return this;
    }
    get length() {
      return this._cells.length;
    }
    /** The i-th cell (negative i counts from the end). */
    at(i) {
      const c = this._cells.at(i);
      if (!c) throw new bp.ValueError(`SequentialCell: index ${i} is out of range for ${this._cells.length} cells`);
      return c;
    }
    [Symbol.iterator]() {
      return this._cells[Symbol.iterator]();
    }
    construct(...inputs) {
      if (!this._cells.length) return inputs.length === 1 ? inputs[0] : inputs;
      if (!this._core) setCore(this, withCoreCells(this._cells, (cores) => check(mod.nnMakeSequentialCell(cores))));
      return callCore(this._core, inputs);
    }
  }

  /** construct(...data, label) = lossFn(backbone(...data), label): the core's WithLossCell. */
  class WithLossCell extends Cell {
    constructor(backbone, lossFn) {
      super();
      if (!(backbone instanceof BaseCell) || typeof lossFn !== 'function') {
        throw new bp.ValueError('WithLossCell: expected a backbone cell and a loss');
      }
      this.backbone = backbone;
      this.lossFn = lossFn;
      setCore(this, withCoreCells([backbone, lossFn], ([b, l]) => check(mod.nnMakeWithLossCell(b, l))));
    }
    construct(...inputs) {
      return callCore(this._core, inputs);
    }
  }

  /**
   * One training step per call, the core's TrainOneStepCell: the loss of `network` and its gradients with respect
   * to the optimizer's parameters, then the optimizer's update. Returns the loss computed before the update; with
   * { hasAux: true } the network returns [loss, ...aux] and the step [loss, ...aux].
   */
  class TrainOneStepCell extends Cell {
    constructor(network, optimizer, { hasAux = false } = {}) {
      super();
      if (!(network instanceof BaseCell)) throw new bp.ValueError('TrainOneStepCell: expected a network cell');
      if (!(optimizer instanceof Optimizer)) throw new bp.ValueError('TrainOneStepCell: expected a bp.optim optimizer');
      this.network = network;
      hidden(this, 'optimizer', optimizer);
      setCore(this, withCoreCells([network], ([n]) => check(mod.nnMakeTrainOneStepCell(n, optimizer._native, !!hasAux))));
    }
    construct(...inputs) {
      return callCore(this._core, inputs);
    }
  }

  /**
   * MindSpore's TrainOneStepWithLossScaleCell, the core's: the gradients of loss * scale, unscaled; the
   * optimizer's update only when they are all finite; then the scaler adjusts. Returns [loss, overflow, scale]:
   * the loss before the update, a 0-d bool (true: the step was skipped) and the scale the step used (with
   * { hasAux: true }, the network's [loss, ...aux] gives [loss, overflow, scale, ...aux]).
   */
  class TrainOneStepWithLossScaleCell extends Cell {
    constructor(network, optimizer, scaler, { hasAux = false } = {}) {
      super();
      if (!(network instanceof BaseCell)) throw new bp.ValueError('TrainOneStepWithLossScaleCell: expected a network cell');
      if (!(optimizer instanceof Optimizer)) {
        throw new bp.ValueError('TrainOneStepWithLossScaleCell: expected a bp.optim optimizer');
      }
      if (!(scaler instanceof bp.amp.LossScaler)) {
        throw new bp.ValueError('TrainOneStepWithLossScaleCell: expected a bp.amp loss scaler');
      }
      this.network = network;
      hidden(this, 'optimizer', optimizer);
      hidden(this, 'scaler', scaler);
      setCore(this, withCoreCells([network], ([n]) =>
        check(mod.ampMakeTrainOneStepWithLossScaleCell(n, optimizer._native, scaler._native, !!hasAux)),
      ));
    }
    construct(...inputs) {
      return callCore(this._core, inputs);
    }
  }

  Object.assign(nn, { SequentialCell, WithLossCell, TrainOneStepCell, TrainOneStepWithLossScaleCell });

  // -- initializers --

  const init = {};
  for (const [name, argNames] of Object.entries(INIT_ARGS)) {
    const make = (...argv) => new Initializer(name, collectArgs(bp, `bp.nn.init.${camel(name)}`, argv, { names: argNames }));
    init[name] = make;
    init[camel(name)] = make;
  }
  nn.init = init;
  /** Seeds the stream initializers and Dropout draw from (MindSpore's set_seed): same seed, same weights. */
  nn.setSeed = (seed) => {
    check(mod.nnSetSeed(seed));
  };
  nn.set_seed = nn.setSeed;
  /** A new tensor of `shape` filled by an initializer (a name, bp.nn.init.*(...) or a tensor). */
  nn.initializer = (initValue, shape, { dtype = 'float32' } = {}) => {
    const temps = [];
    try {
      const arg = initArg(bp, 'initializer', 'init', initValue, temps);
      return bp._wrap(check(mod.nnInitializer({ init: arg, shape, dtype })));
    } finally {
      for (const t of temps) t.dispose();
    }
  };
  /** The recommended gain of a nonlinearity (PyTorch's calculate_gain). */
  nn.calculateGain = (nonlinearity, param = 0) => check(mod.nnCalculateGain(nonlinearity, param));

  // -- optimizers --

  function parameterList(who, params) {
    const list = params instanceof BaseCell ? params.trainableParams() : Array.from(params ?? []);
    list.forEach((p, i) => {
      if (!(p instanceof Parameter)) {
        throw new bp.ValueError(`${who}: item ${i} of params is not a Parameter (pass net.trainableParams())`);
      }
    });
    return list;
  }

  /** Updates a list of Parameters in place from one gradient per parameter (PyTorch's update rules). */
  class Optimizer {
    constructor(kind, params, argv) {
      if (!OPTIMIZERS[kind]) throw new bp.ValueError(`bp.optim: unknown optimizer '${kind}'`);
      const list = parameterList(kind, params);
      const args = collectArgs(bp, kind, argv, OPTIMIZERS[kind]);
      const handle = check(mod.nnMakeOptimizer(kind, list.map((p) => p.handle), args));
      hidden(this, '_native', handle);
      if (nativeObjects) nativeObjects.register(this, handle);
      /** The parameters it updates, in order. */
      this.parameters = Object.freeze(list);
    }
    get name() {
      return check(mod.nnOptimizerInfo(this._native)).name;
    }
    get learningRate() {
      return check(mod.nnOptimizerInfo(this._native)).learningRate;
    }
    set learningRate(lr) {
      check(mod.nnOptimizerSetLr(this._native, lr));
    }
    /**
     * Turns weight decay off for the parameters `excluded(p)` picks; by default those of fewer than 2 dimensions
     * (biases, norm weights: the usual AdamW recipe of nanoGPT and Hugging Face).
     */
    excludeFromWeightDecay(excluded = (p) => p.shape.length < 2) {
      check(mod.nnOptimizerExcludeFromDecay(this._native, this.parameters.map((p) => Boolean(excluded(p)))));
      return this;
    }
    /** step() calls so far. */
    get stepCount() {
      return check(mod.nnOptimizerInfo(this._native)).stepCount;
    }
    /**
     * One update from one gradient per parameter (the array valueAndGrad returns for
     * { gradPosition: null, weights: optimizer.parameters }). Checks every gradient before writing anything.
     */
    step(grads, applyIf) {
      if (!Array.isArray(grads)) {
        throw new bp.ValueError(`${this.name}.step: expected an array with one gradient per parameter`);
      }
      const handles = grads.map((g, i) => {
        if (g instanceof Tensor) return g.handle;
        if (g === null || g === undefined) return null;
        throw new bp.ValueError(`${this.name}.step: gradient ${i} is not a tensor`);
      });
      if (applyIf === undefined) {
        check(mod.nnOptimizerStep(this._native, handles));
        return;
      }
      // Mixed precision's gated step: nothing changes (step counts included) when applyIf, a 0-d bool tensor, is false.
      if (!(applyIf instanceof Tensor)) throw new bp.ValueError(`${this.name}.step: applyIf must be a 0-d bool tensor`);
      check(mod.nnOptimizerStepIf(this._native, handles, applyIf.handle));
    }
    /** step(grads), MindSpore's name. */
    applyGradients(grads) {
      this.step(grads);
    }
    /** Updates parameter i received. */
    updateCount(i) {
      return check(mod.nnOptimizerUpdateCount(this._native, i));
    }
    /** The state tensors of parameter i (momentum buffers, moments) by name; they share the optimizer's storage. */
    state(i) {
      const out = {};
      for (const [key, h] of check(mod.nnOptimizerState(this._native, i))) out[key] = bp._wrap(h);
      return out;
    }
  }

  const optim = { Optimizer };
  for (const kind of Object.keys(OPTIMIZERS)) {
    optim[kind] = {
      [kind]: class extends Optimizer {
        constructor(params, ...argv) {
          super(kind, params, argv);
        }
      },
    }[kind];
  }

  /** Sets an optimizer's learning rate per epoch (PyTorch's schedules, closed forms). */
  class LRScheduler {
    constructor(kind, optimizer, argv) {
      if (!(optimizer instanceof Optimizer)) throw new bp.ValueError(`${kind}: expected a bp.optim optimizer`);
      const args = collectArgs(bp, kind, argv, SCHEDULES[kind]);
      const handle = check(mod.nnMakeSchedule(kind, optimizer._native, args));
      hidden(this, '_native', handle);
      if (nativeObjects) nativeObjects.register(this, handle);
      this.optimizer = optimizer;
    }
    /** Advances one epoch, sets the optimizer's rate and returns it. */
    step() {
      return check(mod.nnScheduleStep(this._native));
    }
    getLastLr() {
      return check(mod.nnScheduleInfo(this._native)).lastLr;
    }
    get lastEpoch() {
      return check(mod.nnScheduleInfo(this._native)).lastEpoch;
    }
    get baseLr() {
      return check(mod.nnScheduleInfo(this._native)).baseLr;
    }
    /** The rate at `epoch`. */
    lrAt(epoch) {
      return check(mod.nnScheduleLrAt(this._native, epoch));
    }
  }
  optim.LRScheduler = LRScheduler;
  /**
   * MindSpore's ops.clip_by_global_norm: the gradients scaled by clipNorm / max(globalNorm, clipNorm). Returns
   * { grads, globalNorm } (globalNorm: the norm before clipping, a 0-d tensor, as PyTorch's clip_grad_norm_ returns).
   */
  optim.clipByGlobalNorm = (grads, clipNorm = 1.0) => {
    if (!Array.isArray(grads)) throw new bp.ValueError('clipByGlobalNorm: expected an array of gradient tensors');
    const handles = grads.map((g, i) => {
      if (g instanceof Tensor) return g.handle;
      throw new bp.ValueError(`clipByGlobalNorm: gradient ${i} is not a tensor`);
    });
    const out = check(mod.nnClipByGlobalNorm(handles, clipNorm));
    const norm = out.pop();
    return { grads: out.map((h) => bp._wrap(h)), globalNorm: norm === null ? null : bp._wrap(norm) };
  };
  for (const kind of Object.keys(SCHEDULES)) {
    optim[kind] = {
      [kind]: class extends LRScheduler {
        constructor(optimizer, ...argv) {
          super(kind, optimizer, argv);
        }
      },
    }[kind];
  }

  return { nn, optim };
}

