import { runPage } from '/tests/bundlers/app/checks.js';
import { init } from '/web/index.js';

runPage(init, () => new Worker(new URL('./worker.js', import.meta.url), { type: 'module' }));
