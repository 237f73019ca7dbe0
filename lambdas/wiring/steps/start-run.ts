import { createStartRun } from '../../steps/start-run.js';
import { type StepWiring } from './context.js';

export const wireStartRun: StepWiring = ({ agent, deps, prices }) =>
  createStartRun({
    agent,
    ledger: deps.ledger,
    executions: deps.executions,
    clock: deps.clock,
    codeVersion: deps.codeVersion,
    defaultModel: deps.defaultModel,
    priceTable: prices,
    starterMac: deps.approvals?.starterMac,
    maxBudgets: deps.maxBudgets,
  });
