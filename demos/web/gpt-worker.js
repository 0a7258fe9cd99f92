// Trains a character-level GPT (bp.nn.GPT) off the page's main thread on the bundled fortunes slice
// (data/fortunes/, a slice of the corpus scripts/make-text-corpus.mjs builds), or continues from a checkpoint that
// `bprop train --model gpt` wrote natively.
// Messages in: {type: 'start', config} | {type: 'pause'} | {type: 'resume'} | {type: 'attention', prompt} |
// {type: 'sample', prompt} | {type: 'load', bytes, name}.
// Messages out: {type: 'ready'} | {type: 'started', ...} | {type: 'progress', ...} | {type: 'sample', ...} |
// {type: 'attention', ...} | {type: 'error', message}. Progress and samples carry the id of their run.
import { init } from '/web/index.js';
import { rng } from './toy-data.js';

const bp = await init();

const TICK_MS = 100; // training time between two progress messages
const EVAL_EVERY = 50; // steps between validation losses
const SAMPLE_EVERY = 100; // steps between samples
const SAMPLE_TOKENS = 160;

let text = null; // { train, val }: the slice, fetched once
let run = null;

async function loadText() {
  if (!text) {
    const get = async (name) => {
      const url = new URL(`./data/fortunes/${name}`, import.meta.url);
      const res = await fetch(url);
      if (!res.ok) throw new Error(`could not load ${url.pathname}: HTTP ${res.status}`);
      return new Uint8Array(await res.arrayBuffer());
    };
    text = { train: await get('train.txt'), val: await get('val.txt') };
  }
  return text;
}

/** The byte vocabulary of both texts (sorted distinct bytes), as bprop train builds it natively. */
function vocabularyOf(...texts) {
  const seen = new Set();
  for (const t of texts) for (const b of t) seen.add(b);
  return String.fromCharCode(...[...seen].sort((a, b) => a - b));
}

function encoder(vocab) {
  const index = new Map([...vocab].map((c, i) => [c.charCodeAt(0), i]));
  return {
    encode: (bytes) => Int32Array.from(bytes, (b) => index.get(b) ?? 0),
    encodeText: (s) => [...s].map((c) => index.get(c.charCodeAt(0))).filter((i) => i !== undefined),
    decode: (ids) => ids.map((i) => vocab[i]).join(''),
  };
}

/** Random windows of `context` + 1 tokens: inputs and targets shifted by one, int32 (batch, context). */
function batch(tokens, context, size, random) {
  const x = new Int32Array(size * context);
  const y = new Int32Array(size * context);
  for (let b = 0; b < size; b++) {
    const s = Math.floor(random() * (tokens.length - context - 1));
    x.set(tokens.subarray(s, s + context), b * context);
    y.set(tokens.subarray(s + 1, s + context + 1), b * context);
  }
  return [bp.tensor(x, { shape: [size, context] }), bp.tensor(y, { shape: [size, context] })];
}

/**
 * The run: the model, AdamW (no decay on biases and norms), one jitted step of loss, gradients, clipping by the
 * global norm and the update.
 */
function makeRun(config, vocab, model) {
  const enc = encoder(vocab);
  const gpt =
    model ??
    (bp.nn.setSeed(config.seed),
    new bp.nn.GPT({
      vocabSize: vocab.length,
      context: config.context,
      layers: config.layers,
      heads: config.heads,
      width: config.width,
    }));
  const params = gpt.trainableParams();
  const optimizer = new bp.optim.AdamW(params, { learningRate: config.lr, betas: [0.9, 0.99], weightDecay: 0.1 });
  optimizer.excludeFromWeightDecay();
  const lossAndGrads = bp.valueAndGrad((x, y) => gpt(x, y), { gradPosition: null, weights: params });
  const step = bp.jit((x, y) => {
    const [loss, grads] = lossAndGrads(x, y);
    const clipped = bp.optim.clipByGlobalNorm(grads, 1.0);
    optimizer.step(clipped.grads);
    return loss;
  });
  return {
    id: config.id,
    config: { ...config, context: gpt.config?.context ?? config.context },
    gpt,
    enc,
    vocab,
    train: enc.encode(text.train),
    val: enc.encode(text.val),
    random: rng(config.seed),
    step,
    steps: 0,
    tokens: 0,
    seconds: 0,
    paused: false,
    running: false,
  };
}

function validationLoss(r) {
  const random = rng(12345); // the same batches at every evaluation
  r.gpt.setTrain(false);
  let sum = 0;
  for (let i = 0; i < 4; i++) {
    sum += bp.tidy(() => {
      const [x, y] = batch(r.val, r.config.context, r.config.batch, random);
      return r.gpt(x, y).item();
    });
  }
  r.gpt.setTrain(true);
  return sum / 4;
}

function sample(r, prompt, seed) {
  const ids = r.enc.encodeText(prompt || '\n');
  const out = r.gpt.generate(ids.length ? ids : [0], { tokens: SAMPLE_TOKENS, temperature: 0.8, topK: 10, seed });
  postMessage({ type: 'sample', id: r.id, step: r.steps, prompt, text: r.enc.decode(out) });
}

function tick() {
  const r = run;
  if (!r || r.paused) {
    if (r) r.running = false;
    return;
  }
  r.running = true;
  const t0 = performance.now();
  let loss = NaN;
  let val = null;
  while (performance.now() - t0 < TICK_MS) {
    loss = bp.tidy(() => {
      const [x, y] = batch(r.train, r.config.context, r.config.batch, r.random);
      return r.step(x, y).item();
    });
    r.steps++;
    r.tokens += r.config.batch * r.config.context;
    if (r.steps % EVAL_EVERY === 0) val = validationLoss(r);
    if (r.steps % SAMPLE_EVERY === 0) sample(r, '\n', r.steps);
  }
  r.seconds += (performance.now() - t0) / 1000;
  postMessage({
    type: 'progress',
    id: r.id,
    steps: r.steps,
    loss,
    val,
    tokensPerSec: r.tokens / r.seconds,
    tensors: bp.memory().tensors,
  });
  setTimeout(tick, 0);
}

function startRun(r) {
  run = r;
  postMessage({
    type: 'started',
    id: r.id,
    config: r.config,
    vocab: r.vocab.length,
    parameters: r.gpt.trainableParams().reduce((n, p) => n + p.size, 0),
    loadedFrom: r.loadedFrom ?? null,
  });
  if (!r.running) setTimeout(tick, 0);
}

/** A checkpoint of `bprop train --model gpt`: its configuration and vocabulary from the metadata, its weights. */
function loadCheckpoint(bytes, name, config) {
  const { tensors, metadata } = bp.parseCheckpoint(bytes, { source: name });
  if (metadata.format !== 'bprop-gpt/1') {
    for (const t of tensors.values()) t.dispose();
    throw new Error(`${name} is not a GPT checkpoint of bprop train --model gpt (format '${metadata.format ?? 'none'}')`);
  }
  const c = {
    vocabSize: Number(metadata.gpt_vocab_size),
    context: Number(metadata.gpt_context),
    layers: Number(metadata.gpt_layers),
    heads: Number(metadata.gpt_heads),
    width: Number(metadata.gpt_width),
    tieWeights: metadata.gpt_tie_weights !== 'false',
  };
  const gpt = new bp.nn.GPT(c);
  try {
    bp.loadParamIntoNet(gpt, tensors, { source: name });  // (its optimizer state, 'optimizer.*', is left out)
  } finally {
    for (const t of tensors.values()) t.dispose();
  }
  gpt.config = c;
  const r = makeRun({ ...config, context: c.context, layers: c.layers, heads: c.heads, width: c.width }, metadata.vocab, gpt);
  r.steps = Number(metadata.step ?? 0);
  r.loadedFrom = name;
  return r;
}

onmessage = async (ev) => {
  const m = ev.data;
  try {
    await loadText();
    if (m.type === 'start') {
      startRun(makeRun(m.config, vocabularyOf(text.train, text.val)));
    } else if (m.type === 'load') {
      const r = loadCheckpoint(new Uint8Array(m.bytes), m.name, m.config);
      startRun(r);
      sample(r, '\n', 1);
    } else if (m.type === 'pause') {
      if (run) run.paused = true;
    } else if (m.type === 'resume') {
      if (run && run.paused) {
        run.paused = false;
        if (!run.running) setTimeout(tick, 0);
      }
    } else if (m.type === 'sample' && run) {
      sample(run, m.prompt, Date.now() % 100000);
    } else if (m.type === 'attention' && run) {
      const ids = run.enc.encodeText(m.prompt).slice(-run.config.context);
      if (!ids.length) throw new Error('the prompt has no character of the vocabulary');
      const maps = bp.tidy(() => run.gpt.attentionWeights(ids).map((w) => w.toArray()[0]));
      postMessage({ type: 'attention', id: run.id, chars: ids.map((i) => run.vocab[i]), maps });
    }
  } catch (e) {
    postMessage({ type: 'error', id: m.config?.id ?? run?.id, message: e.message });
  }
};

postMessage({ type: 'ready' });
