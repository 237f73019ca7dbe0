import { awsDeps } from '../adapters/aws-deps.js';
import { stepHandler } from '../adapters/middleware.js';
import { createCallTool } from '../steps/call-tool.js';

const deps = awsDeps();
export const handler = stepHandler(
  createCallTool({ ledger: deps.ledger(), api: deps.api(), clock: deps.clock, breaker: deps.breaker(), leaseMs: deps.leaseMs() }),
);
