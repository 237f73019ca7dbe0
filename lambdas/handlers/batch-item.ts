import agent from '@savepoint/agent-entry';
import { starterKey } from '../adapters/aws-clients.js';
import { stepFunctions } from '../adapters/sfn-clients.js';
import { batchItemHandler } from '../adapters/aws-batch-item.js';

export const handler = batchItemHandler(agent, { clients: { ...stepFunctions, ...starterKey } });
