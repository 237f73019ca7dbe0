import { forkEffects } from '../../runs/fork.js';
import { createCallTool } from '../../steps/call-tool.js';
import { metered, type StepWiring } from './context.js';

export const wireCallTool: StepWiring = (context) => {
  const { agent, deps, fingerprint } = context;
  // A fork's writes are reused from its parent, or not sent (runs/fork.ts); other runs' tools are as they are.
  return metered(context, createCallTool({ agent: forkEffects(agent, deps.ledger), fingerprint, agentDeps: context.agentDeps, ledger: deps.ledger, clock: deps.clock, breaker: deps.breaker, leaseMs: deps.leaseMs, decisionMac: deps.approvals?.decisionMac, toolSecrets: deps.toolSecrets, callbacks: deps.callbacks, ...(deps.children && { children: deps.children }), ...(deps.onToolFailure && { onToolFailure: deps.onToolFailure }) }));
};
