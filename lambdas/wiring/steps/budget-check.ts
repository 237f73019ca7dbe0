import { createBudgetCheck } from '../../steps/budget-check.js';
import { type StepWiring } from './context.js';

export const wireBudgetCheck: StepWiring = ({ agent, deps, prices, fingerprint }) => createBudgetCheck({ agent, fingerprint, ledger: deps.ledger, clock: deps.clock, decisionMac: deps.approvals?.decisionMac, priceTable: prices });
