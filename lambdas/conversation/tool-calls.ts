import * as z from 'zod';
import { schemaOnFirstUse } from '../shared/on-first-use.js';
import { unparsedOf, type ToolUseBlock } from '../records/messages.js';
import { clip } from '../shared/text.js';
import { findTool, type AgentDefinition, type ApprovalRequest, type RunFacts, type ToolDefinition } from '../define.js';
import type { BlobStore, TurnLedger } from '../ledger/ledger.js';
import { parseBlobRef, resolveResults } from '../ledger/blobs.js';
import type { RunRecord, ToolCallRecord, TurnRecord } from '../records/ledger-records.js';
import { InvalidInputError } from '../shared/errors.js';
import { problemsOf } from '../shared/validation.js';
import { effectKeyOf } from '../tools/effects.js';
import { aggregateApproval } from '../tools/aggregates.js';
import { agentDepsOf, completedCallsThrough, idempotencyKey, runView, toolUses } from './turns.js';
import { reusableWrites, writeVerdict } from './fork-writes.js';

/**
 * One tool call of a model turn, derived once from the turn record: which tool, its arguments as
 * the tool's schema parsed them (or the model's mistake), whether a person must approve it, and the
 * key every attempt sends. CallModel derives each call of its turn to plan the `ToolCalls` Map;
 * RequestApproval and CallTool derive the call they are handed with the same function from the
 * same records, so each step sees the same call (the rule's facts do not change while the turn runs).
 */
export interface DerivedCall {
  turn: number;
  call: number;
  block: ToolUseBlock;
  /** Absent: the model named a tool the agent does not have. */
  tool?: ToolDefinition;
  /** The parsed arguments (defaults applied); absent when the schema refused them. */
  args?: unknown;
  /** The answer to the model's mistake — nothing is claimed or sent; absent for a call that runs. */
  mistake?: ModelMistake;
  /** What a person must approve before the call runs; absent when it runs on its own. */
  approval?: ApprovalRequest;
  /** The idempotency key every attempt sends: the effect's business key, or run, turn and call id. */
  idempotencyKey: string;
  /** The effect's business key, claimed across the agent's runs (tools/effects.ts). */
  effectKey?: string;
  /** A `reuse` fork's write its parent made: answered from the parent's record, nothing sent, nothing to approve or reserve. */
  reused?: true;
}

export type ModelMistake = ReturnType<typeof unknownTool> | ReturnType<typeof invalidArguments> | { error: 'invalid_arguments'; message: string };

/**
 * An item of the `ToolCalls` Map: a pointer to the call — never the arguments (the execution's
 * payload carries pointers, not the conversation). Whether it needs approval is CallTool's to
 * derive when it runs (Agent.ApprovalNeeded routes it to the wait), from what the run holds then.
 */
export interface ToolCallItem {
  turn: number;
  call: number;
  name: string;
}

/** The calls a derivation weighs besides the turn's own. */
export interface KnownCalls {
  /** The run's completed calls (only those of earlier turns are weighed: the calls of this turn run alongside it). */
  completed: readonly ToolCallRecord[];
  /** A `reuse` fork's parent's completed writes (fork-writes.ts `reusableWrites`): a write answered from them asks nobody. */
  parentWrites?: readonly ToolCallRecord[];
}

/** The call `call` (1-based) of `turn`. */
export function deriveToolCall(agent: AgentDefinition, run: RunRecord, turn: TurnRecord, call: number, known: KnownCalls): DerivedCall {
  const { completed } = known;
  const uses = toolUses(turn);
  const block = uses[call - 1];
  if (!block) throw new InvalidInputError(`call: run ${run.runId} has no tool call ${call} in turn ${turn.turn}`);
  const at = { turn: turn.turn, call };
  const tool = findTool(agent, block.name);
  const fallbackKey = idempotencyKey(run.runId, turn.turn, block.id);
  if (!tool) return { ...at, block, mistake: unknownTool(agent, block.name), idempotencyKey: fallbackKey };
  const written = unparsedOf(block.input);
  if (written !== undefined) return { ...at, block, tool, mistake: unparsedMistake(tool.name, written), idempotencyKey: fallbackKey };
  const parsed = tool.input.safeParse(block.input);
  if (!parsed.success) return { ...at, block, tool, mistake: invalidArguments(tool.name, parsed.error), idempotencyKey: fallbackKey };
  // A dry fork sends no write (runs/fork.ts): nobody is asked to approve a write that is never
  // sent, and it claims no effect either (the claim would answer it with another run's result, or
  // hold the key for a send never made).
  const dry = run.forkedFrom?.effects === 'dry';
  // Nor is anyone asked about a write a `reuse` fork answers from its parent's record (the same
  // verdict its CallTool acts on: runs/fork.ts forkEffects): it is not sent again.
  const reused = tool.effect === 'write' && known.parentWrites !== undefined && reusedWrite(agent, run, tool, parsed.data, { ...at, parentWrites: known.parentWrites });
  // The facts are built only for a tool that has a rule or an aggregate. The tool's own rule
  // speaks first; the agent's declared limits (tools/aggregates.ts) hold the call otherwise.
  const ruled = !((dry || reused) && tool.effect === 'write') && (tool.needsApproval !== undefined || tool.aggregate !== undefined);
  const facts = ruled ? runFacts(agent, turn, call, completed) : undefined;
  const approval = facts && (ruleApproval(tool, tool.needsApproval?.(parsed.data, runView(run), facts, agentDepsOf(agent))) ?? aggregateApproval(agent, tool, parsed.data, facts));
  const effect = dry ? {} : effectKeyOf(agent, tool, parsed.data, { ...runView(run), ...at });
  return {
    ...at,
    block,
    tool,
    args: parsed.data,
    ...(effect.refused !== undefined && { mistake: { error: 'invalid_arguments' as const, message: effect.refused } }),
    ...(approval && { approval }),
    idempotencyKey: effect.key ?? fallbackKey,
    ...(effect.key !== undefined && { effectKey: effect.key }),
    ...(reused && { reused: true as const }),
  };
}

/**
 * The `ApprovalRequest` type as the approval page and the ledger read it. An agent in plain
 * JavaScript (or typed `any`) can return another shape: `amount: 500` would be recorded as `{}`
 * and break the page, a string would be asked as "undefined".
 */
const ApprovalRequestShape = schemaOnFirstUse(() => z.object({
  summary: z.string(),
  amount: z.object({ minor: z.number(), currency: z.string() }).optional(),
  details: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
}));

/**
 * What the tool's `needsApproval` returned, checked. A wrong shape is a bug in the agent's code,
 * not the model's mistake: the step fails as a rule that throws does (the run fails closed, nothing
 * sent), naming the tool and the field.
 */
function ruleApproval(tool: ToolDefinition, returned: ApprovalRequest | undefined): ApprovalRequest | undefined {
  // `null` and `false` say "no approval" as `undefined` does: JavaScript's `cents > 50_000 && { … }`
  // (the tool's aggregate, if any, still weighs the call; `false` used to skip it).
  if (returned === undefined || returned === null || (returned as unknown) === false) return undefined;
  const checked = ApprovalRequestShape().safeParse(returned);
  if (checked.success) return returned;
  throw new TypeError(`tool ${tool.name}: needsApproval must return undefined (or null, false) or { summary, amount?: { minor, currency }, details? }; it returned ${problemsOf(checked.error)}`);
}

/** Whether a fork's write is one its parent made (fork-writes.ts `writeVerdict`), keyed as forkEffects keys it. */
function reusedWrite(agent: AgentDefinition, run: RunRecord, tool: ToolDefinition, args: unknown, at: { turn: number; call: number; parentWrites: readonly ToolCallRecord[] }): boolean {
  const keyOf = (callArgs: unknown, where: { turn: number; call: number }) => tool.idempotencyKey?.(callArgs, { ...runView(run), ...where });
  const parent = at.parentWrites.map((record) => ({ ...record, ...(tool.idempotencyKey && record.name === tool.name && { businessKey: keyOf(record.args, record) }) }));
  return writeVerdict(tool, args, keyOf(args, at), parent).kind === 'reuse';
}

/** The Map's items for the calls of `turn` that have no completed record yet, in call order. */
export function plannedCalls(turn: TurnRecord, completed: readonly ToolCallRecord[]): ToolCallItem[] {
  const done = new Set(completed.filter((record) => record.turn === turn.turn && record.status === 'completed').map((record) => record.call));
  return toolUses(turn).flatMap((block, index) => (done.has(index + 1) ? [] : [{ turn: turn.turn, call: index + 1, name: block.name }]));
}

/**
 * The call `call` of a recorded `turn`, as a step handed it (RequestApproval, CallTool) derives it:
 * the run's completed calls its approval rule weighs are read here — from the conversation cache,
 * usually with no read — and only for a tool that has a rule (most calls read nothing).
 */
export async function deriveRecordedCall(ledger: TurnLedger & BlobStore, agent: AgentDefinition, run: RunRecord, turn: TurnRecord, call: number): Promise<DerivedCall> {
  const block = toolUses(turn)[call - 1];
  const found = block && findTool(agent, block.name);
  const ruled = found !== undefined && (found.needsApproval !== undefined || found.aggregate !== undefined);
  // Results stored by reference are read back: a rule's facts are the whole of what the run observed.
  const completed = ruled ? await resolveResults(ledger, await completedCallsThrough(ledger, run.runId, lastWeighedTurn(turn.turn))) : [];
  const parentWrites = ruled && found.effect === 'write' ? await reusableWrites(ledger, run) : undefined;
  return deriveToolCall(agent, run, turn, call, { completed, ...(parentWrites && { parentWrites }) });
}

/**
 * The last turn whose completed calls an approval rule weighs: the one before its call's own (the
 * calls of its own turn run alongside it, so whether they have completed depends on when it is asked).
 */
const lastWeighedTurn = (turn: number) => turn - 1;

/**
 * What the run did before the call `call` of `turn`, for its approval rule — the one place the
 * facts are built, whichever step asks (CallModel and BudgetCheck planning, RequestApproval,
 * CallTool): its completed calls of earlier turns, in conversation order, then the calls of the
 * same turn before it — asked for together and running alongside it, so without an outcome (a rule
 * summing what was paid counts them). `completed` may hold more (calls of this or later turns, as
 * a step read them): they are left out, so the set is the same whenever the rule is asked.
 */
export function runFacts(agent: AgentDefinition, turn: TurnRecord, call: number, completed: readonly ToolCallRecord[]): RunFacts {
  const alongside = toolUses(turn)
    .slice(0, call - 1)
    .map((block, index) => {
      const parsed = unparsedOf(block.input) === undefined ? findTool(agent, block.name)?.input.safeParse(block.input) : undefined;
      return { turn: turn.turn, call: index + 1, name: block.name, args: jsonObject(parsed?.success ? parsed.data : block.input) };
    });
  return { calls: [...factsBefore(turn, completed), ...alongside] };
}

/**
 * The facts of the completed calls of the turns before `turn`, in conversation order. Every call of
 * a turn (and every step of each) asks for the same ones: they are sorted and made facts once per
 * turn record, and used again while they are made from the same records, in the same order (a
 * completed record never changes; another read, ledger or run gives other records: worked out again).
 */
function factsBefore(turn: TurnRecord, completed: readonly ToolCallRecord[]): readonly RunFacts['calls'][number][] {
  const before = completed.filter((record) => record.status === 'completed' && record.turn <= lastWeighedTurn(turn.turn));
  const known = earlierFacts.get(turn);
  if (known !== undefined && known.records.length === before.length && known.records.every((record, index) => record === before[index])) return known.facts;
  const facts = [...before].sort((a, b) => a.turn - b.turn || a.call - b.call).map(factOf);
  earlierFacts.set(turn, { records: before, facts });
  return facts;
}
const earlierFacts = new WeakMap<TurnRecord, { records: readonly ToolCallRecord[]; facts: readonly RunFacts['calls'][number][] }>();

/**
 * A completed call as a fact, made once per record: a completed record never changes, and every
 * call of every later turn whose tool has a rule weighs it again (its result parsed each time, a
 * run's steps parsed every earlier result: quadratic in its length).
 */
function factOf(record: ToolCallRecord): RunFacts['calls'][number] {
  let fact = facts.get(record);
  if (fact === undefined) facts.set(record, (fact = Object.freeze({ turn: record.turn, call: record.call, name: record.name, args: record.args, ...(record.outcome && { outcome: record.outcome }), ...readResult(record) })));
  return fact;
}
const facts = new WeakMap<ToolCallRecord, RunFacts['calls'][number]>();

/**
 * What a completed read call observed, as a fact: its sealed result, parsed. A result still stored
 * by reference is never a fact (steps hand the rule resolved records: see deriveRecordedCall), nor
 * is one that is not JSON; a write's result is what the model's own call produced, not an observation.
 */
function readResult(record: ToolCallRecord): { result?: unknown } {
  if (record.effect !== 'read' || (record.outcome ?? 'ok') !== 'ok' || record.result === undefined || parseBlobRef(record.result)) return {};
  try {
    return { result: JSON.parse(record.result) as unknown };
  } catch {
    return {};
  }
}

/** `value` as JSON would carry it, when that is an object; an empty one otherwise (what a model sent is on its turn). */
export function jsonObject(value: unknown): Record<string, unknown> {
  const text = JSON.stringify(value);
  const parsed: unknown = text === undefined ? undefined : JSON.parse(text);
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
}

/** The answer to a call of a tool the agent does not have: the model learns which it has. */
export function unknownTool(agent: Pick<AgentDefinition, 'tools'>, name: string): { error: 'unknown_tool'; message: string } {
  return { error: 'unknown_tool', message: `there is no tool ${JSON.stringify(name)}; the tools are: ${agent.tools.map((tool) => tool.name).join(', ')}` };
}

/** The answer to arguments the model wrote that are not a JSON object (`UNPARSED_ARGUMENTS`): what it wrote, clipped. */
function unparsedMistake(name: string, written: string): { error: 'invalid_arguments'; message: string } {
  return { error: 'invalid_arguments', message: `the arguments of ${name} are not a JSON object: ${JSON.stringify(clip(written, 200))}; write them as one JSON object of the tool's input schema` };
}

/** The answer to arguments the tool's schema refuses: every field at fault, by its path. */
export function invalidArguments(name: string, error: z.ZodError): { error: 'invalid_arguments'; message: string; issues: { path: string; message: string }[] } {
  const issues = error.issues.map((issue) => ({ path: issue.path.length > 0 ? issue.path.join('.') : '(root)', message: issue.message }));
  return { error: 'invalid_arguments', message: `invalid arguments of ${name}: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`, issues };
}
