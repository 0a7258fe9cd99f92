// What the app checks, shared by its bundled builds (tests/browser/bundlers.test.mjs) and the unbundled page under
// a strict Content-Security-Policy (tests/browser/csp/): a gradient on the page, one in a module Web Worker, and
// that the policy is really in force (eval is refused), so a page that passes without it cannot pass by accident.

/** Runs the page's checks with the package's `init` and a function that starts the worker. */
export async function runPage(init, startWorker) {
  const results = { problems: [] };
  document.addEventListener('securitypolicyviolation', (e) => {
    results.problems.push(`CSP violation: ${e.violatedDirective} (${e.blockedURI || 'inline'})`);
  });
  try {
    // eslint-disable-next-line no-new-func
    new Function('return 1')();
    results.evalRefused = false;
  } catch (e) {
    results.evalRefused = e instanceof EvalError;
  }
  try {
    const bp = await init();
    const cube = (x) => x.mul(x).mul(x);
    results.grad = bp.grad(cube)(bp.tensor(2)).item();
    results.secondOrder = bp.grad(bp.grad(cube))(bp.tensor(2)).item();
    results.worker = await new Promise((resolve, reject) => {
      const worker = startWorker();
      worker.onmessage = (e) => resolve(e.data);
      worker.onerror = (e) => reject(new Error(`worker: ${e.message}`));
    });
  } catch (e) {
    results.problems.push(`${e.name}: ${e.message}`);
  }
  window.bpropResults = results;
  document.title = 'done';
}

/** The worker's side: a gradient computed there, posted back (or the error). */
export async function runWorker(init) {
  try {
    const bp = await init();
    const [value, grad] = bp.valueAndGrad((x) => x.sin().mul(x))(bp.tensor(0.5));
    postMessage({ value: value.item(), grad: grad.item() });
  } catch (e) {
    postMessage({ error: `${e.name}: ${e.message}` });
  }
}
