import agent from '@savepoint/agent-entry';
import { lambdaHandlers } from '../adapters/aws-deps.js';
import { awsModels } from '../adapters/aws-models.js';

export const handler = lambdaHandlers(agent, { models: awsModels }).step('call-model');
