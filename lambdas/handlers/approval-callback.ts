import agents from '@savepoint/agents-entry';
import { approvalLinks, decisionKey } from '../adapters/aws-clients.js';
import { stepFunctions } from '../adapters/sfn-clients.js';
import { stackApiHandlers } from '../adapters/stack-api.js';

// The stack's one approval callback: every agent's approvals, each decided by its own policy.
export const handler = stackApiHandlers(agents, { clients: { ...stepFunctions, ...approvalLinks, ...decisionKey } }).approvalApi();
