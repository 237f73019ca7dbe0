import { awsDeps } from '../adapters/aws-deps.js';
import { stepHandler } from '../adapters/middleware.js';
import { createRecoverOnStatusChange } from '../steps/recover.js';

const deps = awsDeps();
export const handler = stepHandler(
  createRecoverOnStatusChange({ ledger: deps.ledger(), starter: deps.starter(), clock: deps.clock, policy: deps.recoveryPolicy() }),
);
