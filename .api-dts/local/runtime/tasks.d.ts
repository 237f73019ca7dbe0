import { type AgentDefinition } from '../../lambdas/define.js';
import type { Clock } from '../../lambdas/shared/ports.js';
import { type StepName } from '../../lambdas/shared/steps.js';
import { type CfnTemplateJson, type ExtractedStateMachine } from '../template/asl.js';
import { LocalEngine, type EngineIam, type TaskBinding, type Timers } from '../engine/local-engine.js';
import type { LocalStackOptions } from './options.js';
/**
 * A step as the engine's Task states call it: the state's input, its function's timeout in ms, and
 * the signal its Task's timeout aborts.
 */
export type LocalHandler = (event: unknown, timeoutMs: number, signal?: AbortSignal) => Promise<unknown>;
export type LocalHandlers = Record<StepName, LocalHandler>;
/**
 * The synthesized state machine on the in-process engine: each Task state calls the handlers of
 * its version (`current()` when invoked: version 1 keeps the handlers it started with), and waits
 * local time, compressed, between retries.
 */
export declare function localEngine(extracted: ExtractedStateMachine, current: () => LocalHandlers, clock: Clock & Partial<Timers>, options: LocalStackOptions & {
    leaseMs: number;
}, twin: {
    template: CfnTemplateJson;
    iam?: EngineIam;
    aliases: readonly string[];
}): LocalEngine;
/**
 * A version's Tasks call its own handlers (`current()` when bound: the first version's are the
 * stack's handlers; a deployed version's, its agent's — local/aws/state-machine-versions.ts).
 */
export declare function bindTasks(tasksOf: ExtractedStateMachine['tasks'], current: () => LocalHandlers, template: CfnTemplateJson, functionTimeoutOverrides?: LocalStackOptions['functionTimeoutMs']): Record<string, TaskBinding>;
/**
 * What StartRun and CallTool check at their cold start on AWS (lambdas/adapters/aws-deps.ts): that
 * the agent's tools fit the `toolTimeout` their functions were deployed with (TOOL_TIMEOUT_MS in
 * the template), else a tool would outlast its CallTool function. Locally before the stack starts
 * and at each deploy, so such an agent fails at once, naming the tool and both timeouts.
 */
export declare function assertToolsFitTemplate(agent: Pick<AgentDefinition, 'name' | 'tools'>, template: CfnTemplateJson): void;
