import agent from '@savepoint/agent-entry';
import { stepFunctions } from '../adapters/aws-clients.js';
import { lambdaHandlers } from '../adapters/aws-deps.js';

export const handler = lambdaHandlers(agent, { clients: { ...stepFunctions } }).step('prune-versions');
