/**
 * The agent a deployed function runs. Each `DurableAgent` construct bundles its functions with this
 * module aliased to the agent's own entry file (infra/durable-agent.ts), so the harness's handlers
 * import no agent by name.
 */
declare module '@savepoint/agent-entry' {
  const agent: import('../lambdas/define.js').AgentDefinition;
  export default agent;
}
