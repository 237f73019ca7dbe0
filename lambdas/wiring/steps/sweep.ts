import { createSweep } from '../../steps/sweep.js';
import { recover, type StepWiring } from './context.js';

export const wireSweep: StepWiring = (context) => {
  if (!context.deps.lookup) throw new Error('the sweep step needs an execution lookup (HarnessDeps.lookup)');
  const sweep = createSweep({ ...recover(context), executions: context.deps.lookup });
  return () => sweep();
};
