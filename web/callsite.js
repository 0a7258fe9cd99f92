// Where the user's code called an op: the first stack frame outside this package (and the WebAssembly module),
// which a jit trace records for each node (lower() shows it, errors at replay name it).

/** This package's own files: a stack frame in one of them is not the user's. */
const PACKAGE_DIR = (() => {
  const url = import.meta.url;
  return url.slice(0, url.lastIndexOf('/') + 1);
})();

/**
 * Whether a stack frame's file is the user's: a URL or an absolute path, not in this package, Node's own or the
 * WebAssembly module (whose frames stand between a core cell and the JavaScript cells it calls back).
 */
const userFile = (file) =>
  /^(?:[a-z]+:\/\/|\/)/i.test(file) &&
  !file.startsWith(PACKAGE_DIR) &&
  !file.startsWith('node:') &&
  !file.startsWith('wasm:');
const frameText = (file, line, column) => `${file.slice(file.lastIndexOf('/') + 1)}:${line}:${column}`;

/** "train.js:12:7": the first frame of an Error stack outside this package (V8, SpiderMonkey and JSC formats). */
function callerFrame(stack) {
  for (const line of String(stack).split('\n').slice(1)) {
    const m = /(?:\(|@|at )((?:[a-z]+:\/\/|\/)[^\s()]*?):(\d+):(\d+)\)?\s*$/i.exec(line.trim());
    if (m && userFile(m[1])) return frameText(m[1], m[2], m[3]);
  }
  return '';
}

/** The first `depth` frames above the caller as V8 call sites, or null in engines without them. */
function callSites(depth) {
  if (typeof Error.captureStackTrace !== 'function') return null;
  const { prepareStackTrace, stackTraceLimit } = Error;
  const holder = {};
  try {
    Error.prepareStackTrace = (_, sites) => sites;
    Error.stackTraceLimit = depth;
    Error.captureStackTrace(holder, callSites);
    return Array.isArray(holder.stack) ? holder.stack : null;  // (made when read, so read here)
  } finally {
    Error.prepareStackTrace = prepareStackTrace;
    Error.stackTraceLimit = stackTraceLimit;
  }
}

/**
 * callerFrame of the current stack. Tracing locates every op, so in V8 (Chrome, Node) the frames are read as call
 * sites, without formatting the stack as text, and a few frames first (the user's is usually among them): ~3x
 * faster than the text of the whole stack.
 */
export function currentCallerFrame() {
  // (deeper when a core cell calls JavaScript cells back: each level adds the module's frames)
  for (const depth of [6, 50, 400]) {
    const sites = callSites(depth);
    if (sites === null) return callerFrame(new Error().stack);
    for (const site of sites) {
      const file = site.getFileName();
      if (typeof file === 'string' && userFile(file)) return frameText(file, site.getLineNumber(), site.getColumnNumber());
    }
    if (sites.length < depth) break;
  }
  return '';
}
