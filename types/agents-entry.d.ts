/**
 * Every agent of a stack, for the functions the stack's agents share (its approval callback, runs
 * and run events functions: infra/control-plane.ts). Their bundle aliases this module to a
 * generated one that imports each agent's entry file (infra/step-bundle.ts `agentsEntrySource`).
 */
declare module '@savepoint/agents-entry' {
  const agents: readonly import('../lambdas/define.js').AgentDefinition[];
  export default agents;
}
