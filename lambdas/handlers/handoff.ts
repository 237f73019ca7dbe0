import agent from '@savepoint/agent-entry';
import { stepFunctions } from '../adapters/sfn-clients.js';
import { lambdaStep } from '../adapters/aws-deps.js';
import { wireHandoff } from '../wiring/steps/handoff.js';

export const handler = lambdaStep(agent, 'handoff', wireHandoff, { clients: { ...stepFunctions } });
