import { runWorker } from '/tests/bundlers/app/checks.js';
import { init } from '/web/index.js';

runWorker(init);
