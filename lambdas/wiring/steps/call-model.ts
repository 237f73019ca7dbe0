import { createCallModel } from '../../steps/call-model.js';
import { metered, type StepWiring } from './context.js';

export const wireCallModel: StepWiring = (context) => {
  const { agent, deps, prices, fingerprint } = context;
  return metered(context, createCallModel({ agent, fingerprint, ledger: deps.ledger, models: deps.models, clock: deps.clock, breaker: deps.breaker, decisionMac: deps.approvals?.decisionMac, priceTable: prices, fleetBudget: deps.fleetBudget }));
};
