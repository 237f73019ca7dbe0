import agent from '@savepoint/agent-entry';
import { starterKey, stepFunctions } from '../adapters/aws-clients.js';
import { batchItemHandler } from '../adapters/aws-batch-item.js';

export const handler = batchItemHandler(agent, { clients: { ...stepFunctions, ...starterKey } });
