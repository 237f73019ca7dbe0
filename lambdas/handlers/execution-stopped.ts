// Shared by every agent of the stack (infra/recovery.ts): it loads no agent's code. A stopped
// execution's run is marked killed; a child run's end wakes its parent (SendTaskSuccess on the
// parent's stored token).
import { stepFunctions } from '../adapters/aws-clients.js';
import { controlPlaneHandlers } from '../adapters/control-plane-handlers.js';

export const handler = controlPlaneHandlers({ clients: { ...stepFunctions } }).executionStopped();
