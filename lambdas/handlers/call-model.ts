import agent from '@savepoint/agent-entry';
import { lambdaStep } from '../adapters/aws-deps.js';
import { wireCallModel } from '../wiring/steps/call-model.js';
import { awsModels } from '../adapters/aws-models.js';
import { decisionKeyOnFirstCall } from '../adapters/clients-on-first-call.js';

// KMS on the first budget extension its decision verifies (the harness's decision, made before each call), not at the cold start.
export const handler = lambdaStep(agent, 'call-model', wireCallModel, { models: awsModels, clients: { ...decisionKeyOnFirstCall } });
