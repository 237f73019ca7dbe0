import { awsDeps } from '../adapters/aws-deps.js';
import { stepHandler } from '../adapters/middleware.js';
import { createExecutionStopped } from '../steps/execution-stopped.js';

const deps = awsDeps();
export const handler = stepHandler(createExecutionStopped({ ledger: deps.ledger(), clock: deps.clock }));
