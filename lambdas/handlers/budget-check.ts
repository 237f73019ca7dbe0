import agent from '@savepoint/agent-entry';
import { decisionKey } from '../adapters/aws-clients.js';
import { lambdaHandlers } from '../adapters/aws-deps.js';

// No Step Functions client: the history bound is made from what the steps record (guards/history.ts).
export const handler = lambdaHandlers(agent, { clients: { ...decisionKey } }).step('budget-check');
