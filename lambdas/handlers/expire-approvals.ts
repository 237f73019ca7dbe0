import { awsDeps } from '../adapters/aws-deps.js';
import { stepHandler } from '../adapters/middleware.js';
import { createExpireApprovals } from '../steps/approvals.js';

const deps = awsDeps();
const expire = createExpireApprovals({ ledger: deps.ledger(), callbacks: deps.callbacks(), clock: deps.clock });
export const handler = stepHandler(() => expire());
