import { createRequestApproval } from '../../steps/request-approval.js';
import { approvals, type StepWiring } from './context.js';

export const wireRequestApproval: StepWiring = (context) => createRequestApproval(approvals(context));
