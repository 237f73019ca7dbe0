import agent from '@savepoint/agent-entry';
import { decisionKeyOnFirstCall, stepFunctionsOnFirstCall } from '../adapters/clients-on-first-call.js';
import { lambdaStep } from '../adapters/aws-deps.js';
import { wireCallTool } from '../wiring/steps/call-tool.js';

export const handler = lambdaStep(agent, 'call-tool', wireCallTool, { clients: { ...decisionKeyOnFirstCall, ...stepFunctionsOnFirstCall } });
