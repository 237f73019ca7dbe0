import { createHash } from 'node:crypto';
import type * as z from 'zod';
import { shownValue } from '../shared/text.js';
import { isAgentDefinition } from './agent.js';
import { defineTool, type ChildBudget, type ToolDefinition } from './tool.js';

/** What `defineAgentTool` takes: the tool the model sees, and the agent it runs. */
export interface AgentToolSpec<Args> {
  /** The name the model calls it by (`defineTool`'s rules). */
  readonly name: string;
  /** What the model reads to decide when to hand work to the other agent. */
  readonly description: string;
  /** The call's arguments, validated before anything starts. */
  readonly input: z.ZodType<Args>;
  /**
   * The child agent, made by `defineAgent` (or `withDev`). Its `name` is what the parent starts (its state machine on AWS, deployed beside
   * the parent's: `DurableAgentProps.children`); locally its definition runs the child, with its
   * dev parts when it has them (`withDev`).
   */
  readonly agent: { readonly name: string };
  /** The child run's input, from the call's arguments. @default the arguments themselves */
  readonly childInput?: (args: Args) => unknown;
  /**
   * The child run's dollars and tokens: its `maxDollars` and `maxTokens`. The parent reserves them
   * from its own budget before the child starts (a call whose reservation does not fit is answered
   * to the model as an error, nothing started); what the child does not spend returns to the parent.
   */
  readonly budget: ChildBudget;
  /** The call in words, for traces and approval pages. @default the name and the arguments as JSON */
  readonly describe?: (args: Args) => string;
}

/**
 * Declares another agent as a tool: a call starts a child run of that agent and waits for it
 * without polling (a task token the child's end wakes), and the child's result — its status and
 * its agent's report — is the tool's result. The child's run id derives from the parent's call
 * (`childRunId`: the parent's run id, the turn and the tool call id), so the child starts once,
 * also across the parent's crashes and retries: a second start of that id resumes the same child.
 *
 * @example
 * ```ts
 * import * as z from 'zod';
 * import { defineAgent, defineAgentTool } from 'savepoint';
 * import notes from './notes-agent.js';
 *
 * export default defineAgent({
 *   name: 'note-delegator',
 *   model: 'anthropic:claude-haiku-4-5',
 *   system: 'Hand each note to the notes agent.',
 *   input: z.object({ text: z.string() }),
 *   prompt: (input) => `Have this note saved: ${input.text}`,
 *   tools: [
 *     defineAgentTool({
 *       name: 'save_with_notes_agent',
 *       description: 'Has the notes agent save one note; answers with its report.',
 *       input: z.object({ text: z.string() }),
 *       agent: notes,
 *       budget: { maxDollars: 0.5, maxTokens: 50_000 },
 *     }),
 *   ],
 * });
 * ```
 */
export function defineAgentTool<Args>(spec: AgentToolSpec<Args>): ToolDefinition<Args> {
  const { budget } = spec;
  // Run by the CLI without a type check: a stand-in for the agent would start a child no stack
  // deploys, a string of dollars would be reserved as text, found at the first call.
  const agent: unknown = spec.agent;
  if (!(isAgentDefinition(agent) && /^[a-z][a-z0-9-]{0,39}$/.test(agent.name))) {
    throw new Error(`defineAgentTool ${spec.name}: agent must be an agent definition (made by defineAgent or withDev), got ${shownValue(agent)}`);
  }
  if (typeof budget !== 'object' || budget === null) throw new Error(`defineAgentTool ${spec.name}: budget must be { maxDollars, maxTokens }, got ${shownValue(budget)}`);
  if (!(typeof budget.maxDollars === 'number' && budget.maxDollars > 0 && budget.maxDollars <= 10_000)) {
    throw new Error(`defineAgentTool ${spec.name}: budget.maxDollars must be a number of dollars above 0 and at most 10000, got ${shownValue(budget.maxDollars)}`);
  }
  if (!(Number.isInteger(budget.maxTokens) && budget.maxTokens > 0)) throw new Error(`defineAgentTool ${spec.name}: budget.maxTokens must be a whole number of tokens above 0, got ${shownValue(budget.maxTokens)}`);
  if (spec.childInput !== undefined && typeof spec.childInput !== 'function') {
    throw new Error(`defineAgentTool ${spec.name}: childInput must be a function from the call's arguments to the child run's input, got ${shownValue(spec.childInput)}`);
  }
  return defineTool<Args>({
    name: spec.name,
    description: spec.description,
    input: spec.input,
    // Starting a child changes the world; the child run's id is its idempotency key (a start of the
    // same id is the same child), so a lost answer is asked again, never a second child.
    effect: 'write',
    idempotencyKeys: true,
    ...(spec.describe && { describe: spec.describe }),
    child: { agent: spec.agent, input: spec.childInput ?? ((args) => args), budget: { maxDollars: budget.maxDollars, maxTokens: budget.maxTokens } },
    execute: () => Promise.reject(new Error(`${spec.name} is an agent tool: the harness runs it as a child run`)),
  });
}

/**
 * The run id of the child a parent's tool call starts: the same for every attempt, resume and
 * engine of that call (the parent's run id, the turn, the tool call id). Readable where it fits a
 * run id (80 characters), else the parent's id cut, and a digest of all three.
 */
export function childRunId(parentRunId: string, turn: number, toolCallId: string): string {
  const plain = `${parentRunId}-t${turn}-${toolCallId.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  if (plain.length <= 80 && plain === `${parentRunId}-t${turn}-${toolCallId}`) return plain;
  const digest = createHash('sha256').update(`${parentRunId}\n${turn}\n${toolCallId}`).digest('base64url').slice(0, 22);
  return `${parentRunId.slice(0, 50)}-t${turn}-${digest}`.slice(0, 80);
}
