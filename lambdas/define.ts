/**
 * The public shape of an agent: tools with zod inputs and an effect kind, a prompt, a model,
 * budgets and approval rules, in one module of the user's own. The harness (steps, ledger, guards,
 * approvals, recovery, the engines) imports none of it: it receives an `AgentDefinition` and reads
 * only what is declared here. The rung's entry; its parts, by noun, in define/: a tool (tool.ts),
 * an agent (agent.ts), what a run is bound to and named by (fingerprint.ts).
 */
export * from './define/tool.js';
export * from './define/agent.js';
export * from './define/fingerprint.js';
export * from './define/agent-tool.js';
