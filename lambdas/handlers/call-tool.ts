import agent from '@savepoint/agent-entry';
import { decisionKey, stepFunctionsOnFirstCall } from '../adapters/aws-clients.js';
import { lambdaStep } from '../adapters/aws-deps.js';
import { wireCallTool } from '../wiring/steps/call-tool.js';

export const handler = lambdaStep(agent, 'call-tool', wireCallTool, { clients: { ...decisionKey, ...stepFunctionsOnFirstCall } });
