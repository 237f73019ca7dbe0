import agent from '@savepoint/agent-entry';
import { lambdaStep } from '../adapters/aws-deps.js';
import { wireCallModel } from '../wiring/steps/call-model.js';
import { awsModels } from '../adapters/aws-models.js';

export const handler = lambdaStep(agent, 'call-model', wireCallModel, { models: awsModels });
