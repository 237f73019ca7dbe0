import { awsDeps } from '../adapters/aws-deps.js';
import { stepHandler } from '../adapters/middleware.js';
import { createFinalize } from '../steps/finalize.js';

const deps = awsDeps();
export const handler = stepHandler(createFinalize({ ledger: deps.ledger(), clock: deps.clock }));
