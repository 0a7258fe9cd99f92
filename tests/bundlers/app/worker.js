import { init } from 'bprop';

import { runWorker } from './checks.js';

runWorker(init);
