import { awsDeps } from '../adapters/aws-deps.js';
import { stepHandler } from '../adapters/middleware.js';
import { createRequestApproval } from '../steps/approvals.js';

const deps = awsDeps();
export const handler = stepHandler(
  createRequestApproval({
    ledger: deps.ledger(),
    callbacks: deps.callbacks(),
    clock: deps.clock,
    notify: (approval) => console.log(JSON.stringify({ level: 'INFO', message: 'approval requested', ...approval, taskToken: undefined })),
  }),
);
