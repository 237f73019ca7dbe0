import agent from '@savepoint/agent-entry';
import { lambdaStep } from '../adapters/aws-deps.js';
import { wireCompact } from '../wiring/steps/compact.js';
import { awsModels } from '../adapters/aws-models.js';

export const handler = lambdaStep(agent, 'compact', wireCompact, { models: awsModels });
