import type { AgentDefinition } from '../../lambdas/define.js';
/** Who named the agent: the user (`asked`), or a run's record (`recorded`). */
export type AgentOrigin = 'asked' | 'recorded';
/** The module file of an agent named `spec`, or the file `spec` itself when it is a path. */
export declare function agentModulePath(spec: string, origin?: AgentOrigin): string;
/**
 * The agent's dev module, by convention its sibling `<name>.dev.<ext>` (`agent.ts` →
 * `agent.dev.ts`): the simulated world and scripted model of local runs (`withDev`), kept out of
 * the agent's module so that no Lambda bundle carries them. The path itself when it names one.
 */
export declare function devModulePath(module: string): string | undefined;
export declare class AgentNotFoundError extends Error {
    readonly name = "Agent.InvalidInput";
}
/**
 * Loads an agent for a local run: its dev module when it has one (the agent with its simulated
 * world and scripted model), else the agent's module itself. Each module's default export, or its
 * only export that is an agent definition. The modules are the user's code: what they export is
 * checked, not trusted. `module` is the agent's module (what a deployment bundles).
 */
export declare function loadAgent(spec: string, origin?: AgentOrigin): Promise<{
    agent: AgentDefinition;
    module: string;
    devModule?: string;
}>;
/** The agents found by name (`agents/<name>/agent.ts` under each search root), for the message that asks for one. */
export declare function knownAgents(): string[];
