import agent from '@savepoint/agent-entry';
import { decisionKey, stepFunctionsOnFirstCall } from '../adapters/aws-clients.js';
import { lambdaHandlers } from '../adapters/aws-deps.js';

export const handler = lambdaHandlers(agent, { clients: { ...decisionKey, ...stepFunctionsOnFirstCall } }).step('call-tool');
