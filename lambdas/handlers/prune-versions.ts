// Shared by every agent of the stack (infra/control-plane.ts): it loads no agent's code.
import { lambdaVersions } from '../adapters/aws-clients.js';
import { stepFunctions } from '../adapters/sfn-clients.js';
import { controlPlaneHandlers } from '../adapters/control-plane-handlers.js';

export const handler = controlPlaneHandlers({ clients: { ...stepFunctions, ...lambdaVersions } }).pruneVersions();
