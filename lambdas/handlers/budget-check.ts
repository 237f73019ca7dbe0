import agent from '@savepoint/agent-entry';
import { decisionKey } from '../adapters/aws-clients.js';
import { lambdaStep } from '../adapters/aws-deps.js';
import { wireBudgetCheck } from '../wiring/steps/budget-check.js';

// No Step Functions client: the history bound is made from what the steps record (guards/history.ts).
export const handler = lambdaStep(agent, 'budget-check', wireBudgetCheck, { clients: { ...decisionKey } });
