import agent from '@savepoint/agent-entry';
import { lambdaHandlers } from '../adapters/aws-deps.js';

export const handler = lambdaHandlers(agent).step('handoff');
