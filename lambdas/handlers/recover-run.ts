// Shared by every agent of the stack (infra/recovery.ts): it loads no agent's code.
import { stepFunctions } from '../adapters/sfn-clients.js';
import { controlPlaneHandlers } from '../adapters/control-plane-handlers.js';

export const handler = controlPlaneHandlers({ clients: { ...stepFunctions } }).recoverRun();
