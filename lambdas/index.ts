/**
 * savepoint's public API: what an agent module imports. Everything else in the package is the
 * harness, which imports no agent.
 *
 * ```sh
 * npm install savepoint zod
 * ```
 *
 * @example
 * ```ts
 * import * as z from 'zod';
 * import { defineAgent, defineTool } from 'savepoint';
 *
 * export default defineAgent({
 *   name: 'inbox-notes',
 *   model: 'anthropic:claude-haiku-4-5',
 *   system: 'Save one note per message.',
 *   input: z.object({ inbox: z.string() }),
 *   prompt: (input) => `Save the notes of inbox ${input.inbox}.`,
 *   tools: [
 *     defineTool({
 *       name: 'save_note',
 *       description: 'Saves a note.',
 *       input: z.object({ text: z.string() }),
 *       effect: 'write',
 *       idempotencyKeys: true,
 *       execute: async (args, { idempotencyKey }) => ({ saved: args.text, key: idempotencyKey }),
 *     }),
 *   ],
 * });
 * ```
 *
 * @packageDocumentation
 */
export {
  defineAgent,
  defineTool,
  defineAgentTool,
  childRunId,
  guaranteeOf,
  maxToolTimeoutMs,
  DEFAULT_TOOL_TIMEOUT_MS,
  withDev,
  type AgentDefinition,
  type AgentSpec,
  type AgentToolSpec,
  type ChildBudget,
  type ChildRunSpec,
  type AgentDev,
  type ApprovalRequest,
  type Budgets,
  type DepsContext,
  type DevWorld,
  type DevWorldOptions,
  type LedgerFacts,
  type LoopOptions,
  type Effect,
  type Guarantee,
  type ModelPolicy,
  type ReconcileAnswer,
  type RunView,
  type RunFacts,
  type FactCall,
  type ToolContext,
  type ToolAggregate,
  type ToolDefinition,
  type ToolDefiner,
  type ToolTrace,
} from './define.js';
export type { ContentBlock, Message, MessageRequest, MessageResponse, ModelClient, TextBlock, ToolResultBlock, ToolUseBlock, Usage } from './records/messages.js';
export type { RunConfig } from './records/ledger-records.js';
export {
  ErrorNames,
  HttpInvalidInputError,
  HttpTerminalError,
  HttpTransientError,
  type HttpAnswer,
  InvalidInputError,
  MalformedResponseError,
  ModelThrottledError,
  TerminalError,
  TransientError,
} from './shared/errors.js';
export { parseOrThrow } from './shared/validation.js';
export { CalendarDate } from './shared/dates.js';
export { JsonHttpClient, listOf, type HttpMethod, type JsonHttpClientOptions, type JsonRequestOptions } from './tools/json-http.js';
