import * as z from 'zod';
import { inputTokensOf } from '../records/messages.js';
import { stableJson, type AgentDefinition, type ToolContext, type ToolDefinition } from '../define.js';
import type { BlobStore, GuardLedger, RunLedger, ToolCallLedger, TurnLedger } from '../ledger/ledger.js';
import { callStepKey, modelCallKeys } from '../ledger/step-keys.js';
import { BlobIntegrityError, copyCut, copyResult, keptResult, parseBlobRef, readResult, type BlobRef } from '../ledger/blobs.js';
import { COUNTED_GUARDS, spentOf } from '../records/guards.js';
import { type ForkEdits, type ForkLineage, type RunConfig, type RunRecord, type ToolCallRecord, type TurnRecord } from '../records/ledger-records.js';
import { InvalidInputError } from '../shared/errors.js';
import { RecentMap } from '../shared/recent-map.js';
import { toolUses } from '../conversation/turns.js';
import { writeVerdict } from '../conversation/fork-writes.js';
import { requestShape, shapeChanges } from './request-shape.js';
import { counted } from '../shared/text.js';
import { schemaOnFirstUse } from '../shared/on-first-use.js';

/**
 * Forks: a new run whose first turns are its parent's, copied from the parent's ledger records
 * without any call, and which then goes on live — on this code, with the request's input and model
 * (the parent's, or edited ones), optionally with edited results of the last copied turn's calls.
 * Other code than the parent's continues the copied conversation only under the rule a migration
 * obeys (runs/versions.ts `continuationProblem`). StartRun copies the prefix (a fork on a deployed
 * stack is a StartExecution like any run):
 *
 *   createRun(fork, forkedFrom) ─► recordTurn / recordCall each copied turn and call (the first
 *   stands: a retried StartRun copies nothing twice) ─► countStep each copied step under the step
 *   key the steps count it by (the fork inherits what the parent spent) ─► recordFork on the parent
 *
 * Its writes after the fork point (`forkEffects`): `reuse` answers a write the parent already made
 * from the parent's record and sends nothing (the same business key, else the same tool and
 * arguments); the same key with other arguments is a hazard, refused to the model, never sent.
 * `dry` sends no write: the call is recorded as what it would have done, and a read the parent
 * made is answered from the parent's record (the counterfactual sees the day as the parent saw it).
 */

export const ForkRequest = schemaOnFirstUse(() =>
  z
    .object({
      /** The parent run. */
      from: z.string().regex(/^[A-Za-z0-9_-]{1,80}$/),
      /** The fork's first turn of its own: the parent's turns before it are copied. */
      at: z.number().int().positive(),
      /** What the fork does with a write: `'dry'` sends none; `'reuse'` answers a write the parent made from its record. @default 'reuse' */
      effects: z.enum(['reuse', 'dry']).default('reuse'),
      /** The fork's budgets count only its own work (the copied steps are added to each limit). @default false: it inherits what the parent spent */
      freshBudget: z.boolean().optional(),
      /**
       * Edited results of the tool calls of turn `at - 1`, the last copied turn: what the fork's first
       * turn shows the model instead of what the parent recorded (`call` numbers the turn's calls from
       * 1). Recorded as the call's result in the fork, and named in its lineage (`edited.results`).
       * @default none: every copied result is the parent's
       */
      results: z
        .array(z.object({ call: z.number().int().positive(), result: z.unknown().refine((value) => value !== undefined, 'a result (any JSON value)') }).strict())
        .min(1)
        .max(64)
        .optional(),
    })
    .strict(),
);
export type ForkRequest = z.infer<ReturnType<typeof ForkRequest>>;

/**
 * Whether `existing` is the fork a request asks for again (the same parent, turn and effects, on the
 * same input and model, no result edited), which a start answers as it is rather than refusing its
 * run id (the same request twice starts one fork). An edited result is not compared: a fork that
 * edits one is never taken for another.
 */
export function isSameFork(existing: RunRecord, request: { fork: ForkRequest; input: unknown; model?: string | undefined }): boolean {
  const lineage = existing.forkedFrom;
  if (!lineage || lineage.runId !== request.fork.from || lineage.turn !== request.fork.at || lineage.effects !== request.fork.effects) return false;
  if (request.fork.results || lineage.edited?.results) return false;
  return stableJson(existing.input) === stableJson(request.input) && (request.model === undefined || request.model === existing.model);
}

/** Why a fork of `runId` cannot start while that run is running (forkPrefix), naming the caller's field. */
export function parentRunning(runId: string, field = REQUEST_FIELDS.from): InvalidInputError {
  return new InvalidInputError(`${field}: run ${runId} is still running; fork a run that has finished or stopped (cancel or kill it first to fork it now)`);
}

/**
 * Why a fork cannot start under `runId`: another run holds it (StartRun, the runs API and the CLI
 * refuse it alike, each naming the field its caller sets: the request's `runId`, the CLI's `--run-id`).
 */
export function forkRunIdTaken(runId: string, field = 'runId'): InvalidInputError {
  return new InvalidInputError(`${field}: run ${runId} exists already and is not this fork: name a new run id`);
}

/**
 * How a refusal names the fork's fields: the run request's (`fork.at`, `fork.results[0].call`), or
 * the command line's (`--at`, `--result 3`) when the CLI checks a fork before it starts one.
 */
export interface ForkFieldNames {
  from: string;
  at: string;
  results: string;
  result(index: number, call: number): string;
}
const REQUEST_FIELDS: ForkFieldNames = { from: 'fork.from', at: 'fork.at', results: 'fork.results', result: (index) => `fork.results[${index}].call` };

/**
 * The parent's turns and calls a fork at `at` copies: every turn before it, each with its completed
 * calls. A parent still running is refused: a `reuse` fork answers a write the parent made from the
 * parent's records, read once, so a write the parent made after that read would be sent again by
 * the fork (and a dry fork's counterfactual would read a day still going on).
 */
export function forkPrefix(parent: { run: RunRecord; turns: TurnRecord[]; calls: ToolCallRecord[] }, at: number, named: ForkFieldNames = REQUEST_FIELDS): { turns: TurnRecord[]; calls: ToolCallRecord[] } {
  if (parent.run.status === 'running') throw parentRunning(parent.run.runId, named.from);
  const last = parent.turns.at(-1)?.turn ?? 0;
  if (at > last + 1) throw new InvalidInputError(`${named.at}: run ${parent.run.runId} has ${last} turns; fork at 1 to ${last + 1}`);
  const turns = parent.turns.filter((turn) => turn.turn < at);
  const calls = parent.calls.filter((call) => call.turn < at);
  for (const turn of turns) {
    const uses = toolUses(turn).length;
    const done = calls.filter((call) => call.turn === turn.turn && call.status === 'completed').length;
    if (done !== uses) throw new InvalidInputError(`${named.at}: turn ${turn.turn} of run ${parent.run.runId} has ${uses - done} tool calls without a result; fork at ${turn.turn} or earlier`);
  }
  return { turns, calls };
}

/** The step keys and amounts the steps count a turn and a call by (steps/call-model.ts, call-tool.ts, compact.ts). */
export function copiedSteps(prefix: { turns: TurnRecord[]; calls: ToolCallRecord[] }): { key: string; deltas: Record<string, number> }[] {
  return [
    ...prefix.turns.map((turn) => ({
      key: modelCallKeys(turn.turn).turn,
      deltas: { steps: 1, modelTurns: 1, inputTokens: inputTokensOf(turn.usage), outputTokens: turn.usage.output_tokens, cachedInputTokens: turn.usage.cache_read_input_tokens ?? 0, costMicros: turn.costMicros },
    })),
    ...prefix.calls.map((call) => ({ key: callStepKey(call.turn, call.call), deltas: { steps: 1, toolCalls: 1 } })),
  ];
}

/**
 * The prefix with the edits of `fork.results` applied: each named call of turn `at - 1` answered
 * with the edited result (an `ok` outcome), as the model will see it at the fork's first turn.
 */
export function editedPrefix(prefix: { turns: TurnRecord[]; calls: ToolCallRecord[] }, fork: Pick<ForkRequest, 'at' | 'results'>, named: ForkFieldNames = REQUEST_FIELDS): { turns: TurnRecord[]; calls: ToolCallRecord[] } {
  if (!fork.results) return prefix;
  const turn = fork.at - 1;
  if (turn < 1) throw new InvalidInputError(`${named.results}: a fork at turn 1 copies no tool result to edit; fork at a later turn`);
  const calls = prefix.calls.map((call) => {
    const edit = call.turn === turn ? fork.results!.find((named) => named.call === call.call) : undefined;
    return edit ? { ...call, outcome: 'ok' as const, result: JSON.stringify(edit.result) } : call;
  });
  for (const [index, edit] of fork.results.entries()) {
    if (!prefix.calls.some((call) => call.turn === turn && call.call === edit.call)) {
      const made = prefix.calls.filter((call) => call.turn === turn).length;
      throw new InvalidInputError(`${named.result(index, edit.call)}: turn ${turn} of the parent made ${counted(made, 'tool call')}, not a call ${edit.call}`);
    }
  }
  return { turns: prefix.turns, calls };
}

/**
 * The fork's run record: the run StartRun drafted for this code, with the request's input and
 * model (what differs from the parent's is named in `edited`), the parent's budgets, and its
 * lineage. With `freshBudget`, each limit grows by what the copied steps spent, so the fork's own
 * work has all of it.
 */
export function forkRunRecord(draft: RunRecord, parent: RunRecord, fork: ForkRequest, prefix: { turns: TurnRecord[]; calls: ToolCallRecord[] }): RunRecord {
  const edited: ForkEdits = {
    ...(stableJson(draft.input) !== stableJson(parent.input) && { input: true as const }),
    ...(draft.model !== parent.model && { model: true as const }),
    ...(fork.results && { results: fork.results.map((edit) => ({ turn: fork.at - 1, call: edit.call })) }),
  };
  const lineage: ForkLineage = { runId: parent.runId, turn: fork.at, effects: fork.effects, ...(Object.keys(edited).length > 0 && { edited }) };
  let config: RunConfig = { ...parent.config };
  if (fork.freshBudget) {
    const spent = copiedSteps(prefix).reduce(
      (sum, step) => ({ steps: sum.steps + (step.deltas.steps ?? 0), tokens: sum.tokens + (step.deltas.inputTokens ?? 0) + (step.deltas.outputTokens ?? 0), micros: sum.micros + (step.deltas.costMicros ?? 0) }),
      { steps: 0, tokens: 0, micros: 0 },
    );
    // Each counted budget's limit grows by what the copy spent (records/guards.ts); the wall clock is the fork's own.
    config = { ...config, ...Object.fromEntries(COUNTED_GUARDS.map((row) => [row.field, config[row.field] + spentOf(row, spent)])) };
  }
  // The copy counts the prefix's calls (copyPrefix): no turn of it is left open (ledger/open-turn.ts).
  const last = prefix.turns.at(-1)?.turn ?? 0;
  return { ...draft, config, forkedFrom: lineage, callsCounted: { turn: last, calls: prefix.calls.filter((call) => call.turn === last).map((call) => call.call) } };
}

/**
 * Copies the prefix into the fork and seals the lineage on the parent; every write is idempotent, so
 * a retried StartRun repeats it safely. What a copied result references is stored again under the
 * fork (chunks are per run, and a reference resolves under the run whose record holds it), read back
 * and verified first (ledger/blobs.ts `copyResult`): a result the parent stored by reference, and
 * the whole of a result cut for the model (`maxResultTokens`), which the cut's `stored` names, so
 * both resolve in the fork, also once the parent is pruned. An edited result too large for the
 * call's item is stored by reference like any.
 */
export async function copyPrefix(
  ledger: Pick<RunLedger, 'recordFork'> & Pick<TurnLedger, 'recordTurn'> & Pick<ToolCallLedger, 'recordCall'> & Pick<GuardLedger, 'countStep'> & BlobStore,
  fork: RunRecord,
  prefix: { turns: TurnRecord[]; calls: ToolCallRecord[] },
  now: Date,
): Promise<void> {
  // The edited calls first: a copy cut short by a crash is finished from the parent's records on
  // resume (`finishCopy`), where an edited call already copied stands against the parent's.
  const edited = (call: ToolCallRecord) => fork.forkedFrom?.edited?.results?.some((edit) => edit.turn === call.turn && edit.call === call.call) ?? false;
  for (const call of prefix.calls.filter(edited)) await copyCall(call);
  for (const turn of prefix.turns) await ledger.recordTurn({ ...turn, runId: fork.runId });
  for (const call of prefix.calls.filter((call) => !edited(call))) await copyCall(call);
  for (const step of copiedSteps(prefix)) await ledger.countStep(fork.runId, step.key, step.deltas);
  await ledger.recordFork(fork.forkedFrom!.runId, { runId: fork.runId, turn: fork.forkedFrom!.turn });

  async function copyCall(call: ToolCallRecord): Promise<void> {
    const result = call.result === undefined ? undefined : await copyResult(ledger, fork.runId, call.result, parentBlobs(ledger, call.runId));
    // The parent's own result gone from its blobs is damage, never an earlier version's pointer.
    if (call.result !== undefined && result === undefined) throw new BlobIntegrityError(`run ${call.runId}`, parseBlobRef(call.result)!, 'no chunk found');
    // The parent's idempotency key stays: a provider that sees the call again sees the same request.
    await ledger.recordCall({ ...call, runId: fork.runId, status: 'completed', ...(result !== undefined && { result }) }, now);
  }
}

/**
 * What a parent's record references, read from the parent's blobs for a fork (ledger/blobs.ts
 * `copyResult`, `copyCut`). A reference to chunks the parent never held is read as no longer kept
 * (the cut's head, and no pointer), not as damage: an earlier version copied a cut without its
 * whole into a later run of a business key (its `stored` names the holder's chunks), and into a fork.
 */
function parentBlobs(ledger: BlobStore, parent: string): (ref: BlobRef) => Promise<string | undefined> {
  return (ref) => keptResult(ledger, parent, ref);
}

/**
 * A parent's recorded result as the fork's tool answers it (`forkEffects`): read back when stored by
 * reference, with the whole of a cut copied to the fork's blobs (ledger/blobs.ts `copyCut`), where
 * the fork's record of the answer resolves, as `copyPrefix` does for a copied call.
 */
async function answerFrom(ledger: BlobStore, runId: string, parent: ToolCallRecord): Promise<unknown> {
  const ref = parseBlobRef(parent.result);
  const text = ref ? await readResult(ledger, parent.runId, ref) : (parent.result ?? 'null');
  return JSON.parse(await copyCut(ledger, runId, text, parentBlobs(ledger, parent.runId))) as unknown;
}

/**
 * A fork resumed whose StartRun died while copying (the parent does not list it yet, `recordFork`
 * being the copy's last write): the copy is finished from the parent's records before the fork
 * goes on, so it never continues a conversation with turns missing. Its edited results were
 * written first; if the crash came before them, the edits are lost and the fork is refused.
 */
export async function finishCopy(
  ledger: Parameters<typeof copyPrefix>[0] & Pick<RunLedger, 'getRun'> & Pick<TurnLedger, 'listConversation'>,
  fork: RunRecord,
  now: Date,
): Promise<void> {
  const lineage = fork.forkedFrom;
  if (!lineage) return;
  const parent = await ledger.getRun(lineage.runId);
  if (!parent || parent.forks?.some((known) => known.runId === fork.runId)) return;
  const [own, recorded] = [await ledger.listConversation(fork.runId), await ledger.listConversation(parent.runId)];
  const missing = (lineage.edited?.results ?? []).filter((edit) => !own.calls.some((call) => call.turn === edit.turn && call.call === edit.call));
  if (missing.length > 0) throw new InvalidInputError(`runId: fork ${fork.runId} stopped before its edited results were recorded (turn ${missing[0]!.turn} call ${missing[0]!.call}): start the fork again under a new run id`);
  await copyPrefix(ledger, fork, forkPrefix({ run: parent, turns: recorded.turns, calls: recorded.calls }, lineage.turn), now);
}

/** A tool's business key for a call, when it declares one (`defineTool({ idempotencyKey })`). */
type KeyedTool = ToolDefinition & { idempotencyKey?: (args: unknown, context: ToolContext) => string };

export { writeVerdict, type WriteVerdict } from '../conversation/fork-writes.js';

/** The runs whose lineage (and a fork's parent calls) a container keeps (more than it runs at once: one evicted is read again). */
const RECENT_RUNS = 64;

/** The lineages known in this container, by the ledger they come from (each Lambda function's container has its own). */
const lineagesByLedger = new WeakMap<object, RecentMap<string, Promise<ForkLineage | undefined>>>();
function lineagesOf(ledger: object): RecentMap<string, Promise<ForkLineage | undefined>> {
  let lineages = lineagesByLedger.get(ledger);
  if (!lineages) lineagesByLedger.set(ledger, (lineages = new RecentMap(RECENT_RUNS)));
  return lineages;
}

/**
 * Tells `forkEffects` over `ledger` the lineage of a run a step read anyway (CallTool's batched
 * read): its tools need not read the run again to learn it.
 */
export function rememberLineage(ledger: object, run: Pick<RunRecord, 'runId' | 'forkedFrom'>): void {
  lineagesOf(ledger).set(run.runId, Promise.resolve(run.forkedFrom));
}

/**
 * The agent as a fork runs it: each `write` tool first asks the run's lineage. Not a fork: the
 * tool as it is. `dry`: nothing is sent; the result says what would have been done (and the
 * parent's reads answer the same reads). `reuse`: the
 * parent's recorded result for the same write, nothing sent; a hazard is answered to the model
 * as an error and never sent; a new write goes out. The definition's fingerprint is unchanged
 * (only `execute` differs).
 */
export function forkEffects<A extends AgentDefinition>(agent: A, ledger: Pick<RunLedger, 'getRun'> & Pick<TurnLedger, 'listConversation'> & BlobStore): A {
  // A run's lineage never changes once it is created: read once per run per container (of the
  // runs in progress; a container outlives many runs, so only the most recent are kept), unless
  // the step that calls the tool read the run already (rememberLineage).
  const lineages = lineagesOf(ledger);
  const lineageOf = (runId: string) => lineages.getOrSet(runId, () => ledger.getRun(runId).then((run) => run?.forkedFrom));
  const parentCalls = new RecentMap<string, Promise<ToolCallRecord[]>>(RECENT_RUNS);
  const callsOf = (runId: string) => parentCalls.getOrSet(runId, () => ledger.listConversation(runId).then(({ calls: all }) => all.filter((call) => call.status === 'completed')));
  const tools = agent.tools.map((tool): ToolDefinition => {
    if (tool.effect === 'read') {
      // A dry fork is a counterfactual of the parent's day: a read the parent made is answered as the parent saw it.
      return {
        ...tool,
        execute: async (args, context) => {
          const lineage = await lineageOf(context.runId);
          if (lineage?.effects !== 'dry') return tool.execute(args, context);
          const text = stableJson(args);
          const seen = (await callsOf(lineage.runId)).find((call) => call.name === tool.name && call.outcome === 'ok' && stableJson(call.args) === text);
          return seen ? answerFrom(ledger, context.runId, seen) : tool.execute(args, context);
        },
      };
    }
    const keyed = tool as KeyedTool;
    return {
      ...tool,
      execute: async (args, context) => {
        const lineage = await lineageOf(context.runId);
        if (!lineage) return tool.execute(args, context);
        if (lineage.effects === 'dry') return { wouldHave: { tool: tool.name, args }, sent: false, note: 'a dry fork: this write was not sent' };
        const key = keyed.idempotencyKey?.(args, context);
        const writes = (await callsOf(lineage.runId)).filter((call) => call.effect === 'write');
        const parent = writes.map((call) => ({ ...call, ...(keyed.idempotencyKey && { businessKey: keyed.idempotencyKey(call.args, { ...context, turn: call.turn, call: call.call }) }) }));
        const verdict = writeVerdict(tool, args, key, parent);
        if (verdict.kind === 'reuse') return answerFrom(ledger, context.runId, verdict.parent);
        if (verdict.kind === 'hazard') throw new InvalidInputError(`fork hazard, not sent: ${verdict.reason}`);
        return tool.execute(args, context);
      },
    };
  });
  return { ...agent, tools };
}

/**
 * What a fork at `at` may do to the world, before it goes live: the parent's writes from the fork
 * point on (a `reuse` fork answers each one it repeats with the same key or arguments from the
 * parent's record; any other write it makes is sent), or none for a `dry` fork; then what the fork
 * changes against its parent (`forkChanges`). Lines for a person.
 */
export function hazardReport(parentCalls: readonly ToolCallRecord[], fork: Pick<ForkRequest, 'from' | 'at' | 'effects'>, changes: readonly string[] = []): string[] {
  const changed = changes.length > 0 ? ['what the fork changes against the parent:', ...changes.map((change) => `  ${change}`)] : [];
  if (fork.effects === 'dry') return [`dry fork of ${fork.from} at turn ${fork.at}: no write is sent (each is recorded as what it would have done)`, ...changed];
  const after = parentCalls.filter((call) => call.effect === 'write' && call.turn >= fork.at && call.status === 'completed');
  const made = after.filter((call) => call.outcome === 'ok');
  return [
    `fork of ${fork.from} at turn ${fork.at}, effects reuse: the parent made ${counted(made.length, 'write')} from turn ${fork.at} on:`,
    ...made.map((call) => `  turn ${call.turn} call ${call.call}: ${call.name} ${stableJson(call.args)} (answered from the parent's record if the fork repeats it)`),
    'any write the fork makes that the parent never made, or made with other arguments, is sent live (the same business key with other arguments is refused, never sent)',
    ...changed,
  ];
}

/**
 * What a fork changes against its parent, in words: the code (its version, the system prompt, each
 * tool new, changed or gone — a new write tool's calls are all sent live in a `reuse` fork), the
 * input, the model, the edited results. Empty for a fork of the same run on the same code.
 */
export function forkChanges(
  parent: Pick<RunRecord, 'input' | 'model' | 'requestShape' | 'agentVersion'>,
  onto: { agent: Pick<AgentDefinition, 'system' | 'tools' | 'version'>; input: unknown; model?: string; fork: Pick<ForkRequest, 'at' | 'results'> },
): string[] {
  const lines: string[] = [];
  if (onto.agent.version !== parent.agentVersion) lines.push(`the code: version ${parent.agentVersion ?? '(none)'} → ${onto.agent.version ?? '(none)'}`);
  for (const change of parent.requestShape ? shapeChanges(parent.requestShape, requestShape(onto.agent)) : []) {
    const tool = /^tool (\S+) is new$/.exec(change)?.[1];
    const write = tool !== undefined && onto.agent.tools.some((defined) => defined.name === tool && defined.effect === 'write');
    lines.push(write ? `${change}: a write the parent could not make (each call of it is sent live, unless the fork is dry)` : change);
  }
  if (stableJson(onto.input) !== stableJson(parent.input)) lines.push(`the input: ${stableJson(parent.input)} → ${stableJson(onto.input)}`);
  if (onto.model !== undefined && onto.model !== parent.model) lines.push(`the model: ${parent.model} → ${onto.model} (the copied turns stay the parent's)`);
  for (const edit of onto.fork.results ?? []) lines.push(`the result of turn ${onto.fork.at - 1} call ${edit.call}, as the model sees it: ${stableJson(edit.result)}`);
  return lines;
}

/**
 * Whether a fork's completed write reached the outside: not a copied one (before the fork point),
 * not any of a dry fork's, and not one answered from the parent's record (the same tool and
 * arguments as a write the parent made). What a world's check of its own journal counts.
 */
export function forkSent(call: ToolCallRecord, lineage: ForkLineage, parentCalls: readonly ToolCallRecord[]): boolean {
  if (call.turn < lineage.turn || lineage.effects === 'dry') return false;
  return writeVerdict(call, call.args, undefined, parentCalls.filter((parent) => parent.effect === 'write')).kind !== 'reuse';
}
