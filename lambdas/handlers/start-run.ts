import agent from '@savepoint/agent-entry';
import { starterKey, stepFunctions } from '../adapters/aws-clients.js';
import { lambdaStep } from '../adapters/aws-deps.js';
import { wireStartRun } from '../wiring/create-steps.js';

export const handler = lambdaStep(agent, 'start-run', wireStartRun, { clients: { ...stepFunctions, ...starterKey } });
