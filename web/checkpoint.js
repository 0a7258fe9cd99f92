// Checkpoints from JavaScript: the safetensors files of the C++ core (8-byte header length, JSON header, raw
// little-endian data), written and checked by the same code as natively, so a file saved by the native build
// loads here and the reverse, byte for byte.
//
//   const bytes = bp.saveCheckpoint(net);          // Uint8Array
//   bp.loadCheckpoint(otherNet, bytes);             // checks names, shapes and dtypes first; all or nothing
//
// Errors are ValueErrors starting "For 'save_checkpoint'" or "For 'load_checkpoint'", with the native build's
// messages; a failed load leaves the model unchanged.
import { nnCheck } from './nn.js';
import { isPlainObject } from './util.js';

/** Builds bp.saveCheckpoint, bp.loadCheckpoint, bp.parseCheckpoint and bp.loadParamIntoNet. */
export function makeCheckpoint(bp, { Tensor, Parameter }) {
  const mod = bp._mod;
  const check = (r) => nnCheck(bp, r);

  /** [name, tensor] pairs of a cell, a Map, an object, or a list of [name, tensor] / {name, data}. */
  function namedTensors(obj) {
    let pairs;
    if (obj instanceof bp.Cell) pairs = obj.parametersAndNames();
    else if (obj instanceof Map) pairs = [...obj.entries()];
    else if (Array.isArray(obj)) {
      pairs = obj.map((item, i) => {
        if (Array.isArray(item) && item.length === 2) return item;
        if (isPlainObject(item) && 'name' in item && 'data' in item) return [item.name, item.data];
        throw new bp.ValueError(`For 'save_checkpoint', item ${i} must be a [name, tensor] pair or {name, data}`);
      });
    } else if (isPlainObject(obj)) pairs = Object.entries(obj);
    else {
      throw new bp.ValueError("For 'save_checkpoint', expected a cell, a Map, an object or a list of named tensors");
    }
    for (const [name, t] of pairs) {
      if (typeof name !== 'string') throw new bp.ValueError("For 'save_checkpoint', a tensor name is not a string");
      if (!(t instanceof Tensor)) throw new bp.ValueError(`For 'save_checkpoint', '${name}' is not a tensor`);
    }
    return pairs;
  }

  /** The bytes as a Uint8Array (a Uint8Array or Node Buffer as is, an ArrayBuffer or other view wrapped). */
  function asBytes(who, bytes) {
    if (bytes instanceof Uint8Array) return bytes;
    if (bytes instanceof ArrayBuffer) return new Uint8Array(bytes);
    if (ArrayBuffer.isView(bytes)) return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    throw new bp.ValueError(`For '${who}', expected the checkpoint as a Uint8Array or ArrayBuffer`);
  }

  /**
   * The bytes of a safetensors checkpoint of every parameter of a cell (paths as parametersAndNames gives
   * them, state included), or of named tensors. metadata: string values stored under "__metadata__".
   */
  function saveCheckpoint(obj, { metadata = {} } = {}) {
    const pairs = namedTensors(obj);
    return check(
      mod.nnSaveCheckpoint(
        pairs.map(([n]) => n),
        pairs.map(([, t]) => t.handle),
        metadata,
      ),
    );
  }

  /**
   * Copies a checkpoint's tensors into the cell's parameters of the same names after checking every name,
   * shape and dtype. strict (default): the names must match exactly (the optimizer state of a native training
   * checkpoint, 'optimizer.*', is not the model's and never counts as extra); otherwise missing parameters keep their
   * values and extra tensors are ignored. Returns the names of the parameters not loaded. `source` names the
   * checkpoint in error messages.
   */
  function loadCheckpoint(cell, bytes, { strict = true, source = '<memory>' } = {}) {
    if (!cell || typeof cell.parametersAndNames !== 'function') {
      throw new bp.ValueError("For 'load_checkpoint', expected a cell to load into");
    }
    const pairs = cell.parametersAndNames();
    for (const [name, p] of pairs) {
      if (!(p instanceof Parameter)) throw new bp.ValueError(`For 'load_checkpoint', '${name}' is not a Parameter`);
    }
    return check(
      mod.nnLoadCheckpoint(
        pairs.map(([n]) => n),
        pairs.map(([, p]) => p.handle),
        asBytes('load_checkpoint', bytes),
        !!strict,
        String(source),
      ),
    );
  }

  /** The tensors of checkpoint bytes in file order (a Map of new tensors) and the metadata strings. */
  function parseCheckpoint(bytes, { source = '<memory>' } = {}) {
    const r = check(mod.nnParseCheckpoint(asBytes('load_checkpoint', bytes), String(source)));
    const tensors = new Map();
    r.names.forEach((name, i) => tensors.set(name, bp._wrap(r.tensors[i])));
    return { tensors, metadata: r.metadata };
  }

  /** MindSpore's load_param_into_net: loads named tensors (a Map, an object or a list) into the cell. */
  function loadParamIntoNet(cell, tensors, { strict = true, source = '<parameters>' } = {}) {
    return loadCheckpoint(cell, saveCheckpoint(tensors), { strict, source });
  }

  return { saveCheckpoint, loadCheckpoint, parseCheckpoint, loadParamIntoNet };
}
