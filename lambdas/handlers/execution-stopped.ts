import agent from '@savepoint/agent-entry';
import { stepFunctions } from '../adapters/aws-clients.js';
import { lambdaHandlers } from '../adapters/aws-deps.js';

// Step Functions: a child run's end wakes its parent (SendTaskSuccess on the parent's stored token).
export const handler = lambdaHandlers(agent, { clients: { ...stepFunctions } }).step('execution-stopped');
