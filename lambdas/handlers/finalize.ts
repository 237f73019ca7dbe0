import agent from '@savepoint/agent-entry';
import { lambdaStep } from '../adapters/aws-deps.js';
import { wireFinalize } from '../wiring/steps/finalize.js';

export const handler = lambdaStep(agent, 'finalize', wireFinalize);
