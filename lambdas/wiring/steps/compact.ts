import { toolNames } from '../../define.js';
import { conversation } from '../../steps/call-model.js';
import { createCompact } from '../../steps/compact.js';
import { metered, type StepWiring } from './context.js';

export const wireCompact: StepWiring = (context) => {
  const { agent, deps, prices } = context;
  return metered(context, createCompact({ agent, ledger: deps.ledger, models: deps.models, clock: deps.clock, breaker: deps.breaker, conversation: (run, turns, calls) => conversation(run, turns, calls, toolNames(agent)), priceTable: prices, fleetBudget: deps.fleetBudget }));
};
