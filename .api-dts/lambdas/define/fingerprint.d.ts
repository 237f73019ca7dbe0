import type { AgentDefinition } from './agent.js';
/**
 * What a run is bound to: the agent's name, version, prompt, model, tool schemas and effects, and
 * the price table. A resume on a different fingerprint would continue a conversation with an agent
 * that did not start it.
 */
export declare function agentFingerprint(agent: AgentDefinition, codeVersion: string, priceTableVersion: string): string;
/** The default run id: the agent's name and a hash of the input, so that the same input is the same run. */
export declare function defaultRunId(agent: Pick<AgentDefinition, 'name'>, input: unknown): string;
/** JSON with object keys sorted: equal values, equal text. */
export declare function stableJson(value: unknown): string;
