import agent from '@savepoint/agent-entry';
import { approvalEvents, approvalLinks } from '../adapters/aws-clients.js';
import { stepFunctions } from '../adapters/sfn-clients.js';
import { lambdaStep } from '../adapters/aws-deps.js';
import { wireRequestApproval } from '../wiring/steps/request-approval.js';

export const handler = lambdaStep(agent, 'request-approval', wireRequestApproval, { clients: { ...stepFunctions, ...approvalEvents, ...approvalLinks } });
