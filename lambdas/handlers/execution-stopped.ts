// Shared by every agent of the stack (infra/recovery.ts), every agent's code bundled: a stopped
// execution's run is marked killed and its child runs stopped with it; a child run's end wakes its
// parent (SendTaskSuccess on the parent's stored token).
import agents from '@savepoint/agents-entry';
import { stepFunctions } from '../adapters/sfn-clients.js';
import { controlPlaneHandlers } from '../adapters/control-plane-handlers.js';

export const handler = controlPlaneHandlers({ clients: { ...stepFunctions } }).executionStopped(agents);
