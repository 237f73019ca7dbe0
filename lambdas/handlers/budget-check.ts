import agent from '@savepoint/agent-entry';
import { decisionKeyOnFirstCall } from '../adapters/clients-on-first-call.js';
import { lambdaStep } from '../adapters/aws-deps.js';
import { wireBudgetCheck } from '../wiring/steps/budget-check.js';

// No Step Functions client: the history bound is made from what the steps record (guards/history.ts).
// KMS on the first budget extension it verifies, not at the cold start.
export const handler = lambdaStep(agent, 'budget-check', wireBudgetCheck, { clients: { ...decisionKeyOnFirstCall } });
