import { approvalApiHandler } from '../adapters/approval-http.js';
import { awsDeps } from '../adapters/aws-deps.js';

const deps = awsDeps();
export const handler = approvalApiHandler({ ledger: deps.ledger(), callbacks: deps.callbacks(), clock: deps.clock });
