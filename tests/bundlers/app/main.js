import { init } from 'bprop';

import { runPage } from './checks.js';

runPage(init, () => new Worker(new URL('./worker.js', import.meta.url), { type: 'module' }));
