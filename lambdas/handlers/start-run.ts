import { awsDeps } from '../adapters/aws-deps.js';
import { stepHandler } from '../adapters/middleware.js';
import { createStartRun } from '../steps/start-run.js';

const deps = awsDeps();
export const handler = stepHandler(
  createStartRun({ ledger: deps.ledger(), executions: deps.executions(), clock: deps.clock, codeVersion: deps.codeVersion() }),
);
