import agent from '@savepoint/agent-entry';
import { lambdaStep } from '../adapters/aws-deps.js';
import { wireFinalize } from '../wiring/create-steps.js';

export const handler = lambdaStep(agent, 'finalize', wireFinalize);
