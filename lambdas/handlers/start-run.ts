import agent from '@savepoint/agent-entry';
import { starterKey } from '../adapters/aws-clients.js';
import { stepFunctions } from '../adapters/sfn-clients.js';
import { lambdaStep } from '../adapters/aws-deps.js';
import { wireStartRun } from '../wiring/steps/start-run.js';

export const handler = lambdaStep(agent, 'start-run', wireStartRun, { clients: { ...stepFunctions, ...starterKey } });
