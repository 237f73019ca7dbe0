import { awsDeps } from '../adapters/aws-deps.js';
import { stepHandler } from '../adapters/middleware.js';
import { createCallModel } from '../steps/call-model.js';

const deps = awsDeps();
export const handler = stepHandler(createCallModel({ ledger: deps.ledger(), model: deps.model(), clock: deps.clock, breaker: deps.breaker() }));
