import { createRecoverOnStatusChange } from '../../steps/recover-run.js';
import { recover, type StepWiring } from './context.js';

export const wireRecoverRun: StepWiring = (context) => createRecoverOnStatusChange(recover(context));
