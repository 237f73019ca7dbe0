import { awsDeps } from '../adapters/aws-deps.js';
import { stepHandler } from '../adapters/middleware.js';
import { createBudgetCheck } from '../steps/budget-check.js';

export const handler = stepHandler(createBudgetCheck({ ledger: awsDeps().ledger() }));
