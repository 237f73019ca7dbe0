import agent from '@savepoint/agent-entry';
import { decisionKey } from '../adapters/aws-clients.js';
import { lambdaHandlers } from '../adapters/aws-deps.js';

export const handler = lambdaHandlers(agent, { clients: { ...decisionKey } }).step('call-tool');
