import agent from '@savepoint/agent-entry';
import { starterKey, stepFunctions } from '../adapters/aws-clients.js';
import { lambdaHandlers } from '../adapters/aws-deps.js';

export const handler = lambdaHandlers(agent, { clients: { ...stepFunctions, ...starterKey } }).batchItem();
