import agents from '@savepoint/agents-entry';
import { manifestObjects, starterKey } from '../adapters/aws-clients.js';
import { stepFunctions } from '../adapters/sfn-clients.js';
import { stackApiHandlers } from '../adapters/stack-api.js';

// The stack's one runs function: a start is checked by the named agent's own code (its input schema, its run id rule).
export const handler = stackApiHandlers(agents, { clients: { ...stepFunctions, ...starterKey, ...manifestObjects } }).runsApi();
