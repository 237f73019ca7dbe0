import { createExpireApprovals } from '../../steps/expire-approvals.js';
import { approvals, type StepWiring } from './context.js';

export const wireExpireApprovals: StepWiring = (context) => {
  const expire = createExpireApprovals(approvals(context));
  return () => expire();
};
