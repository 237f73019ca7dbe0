import agent from '@savepoint/agent-entry';
import { approvalEvents, approvalLinks, stepFunctions } from '../adapters/aws-clients.js';
import { lambdaHandlers } from '../adapters/aws-deps.js';

export const handler = lambdaHandlers(agent, { clients: { ...stepFunctions, ...approvalEvents, ...approvalLinks } }).step('request-approval');
