import { awsDeps } from '../adapters/aws-deps.js';
import { stepHandler } from '../adapters/middleware.js';
import { createBudgetCheck } from '../steps/budget-check.js';

const deps = awsDeps();
export const handler = stepHandler(createBudgetCheck({ ledger: deps.ledger(), clock: deps.clock }));
