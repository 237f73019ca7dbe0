import * as z from 'zod';
import { schemaOnFirstUse } from '../shared/on-first-use.js';
import { agentFingerprint, type AgentDefinition } from '../define.js';
import type { BlobStore, ExecutionRunLedger, GuardLedger, RunLedger, ToolCallLedger, TurnLedger } from '../ledger/ledger.js';
import { RunConfig, ZERO_COUNTERS, type BudgetCaps, type MigrationRecord, type RunRecord, type ToolCallRecord } from '../records/ledger-records.js';
import { DEFAULT_PRICE_TABLE, priceFor, type PriceTable } from '../models/prices.js';
import { configProblems } from '../approvals/policy.js';
import { ErrorNames, InvalidInputError, LedgerIntegrityError } from '../shared/errors.js';
import { verifyRun } from '../ledger/seal.js';
import { parseOrThrow } from '../shared/validation.js';
import type { Clock, Executions } from '../shared/ports.js';
import { modelSpecOf, namedRunId, otherRequestProblem, runRecordTooLarge, runRequestFromEvent, type StartRequest } from '../runs/run-request.js';
import { codeFingerprint, continuationProblem, describeVersion, migrationVerdict } from '../runs/versions.js';
import { historyAtStart, type HistoryBound } from '../guards/history.js';
import { verifiedStarter } from '../runs/starter.js';
import type { DecisionMac } from '../approvals/decision-mac.js';
import { settledChildRefusal } from '../records/child-budget.js';

/**
 * What the state machine tells StartRun about itself in the Task's payload (infra/agent-state-machine.ts):
 * StartRun makes no Step Functions call to learn it (DescribeStateMachineForExecution refills 1/s
 * per account, and a start throttled before its run record exists would be lost).
 */
export const DefinitionFacts = schemaOnFirstUse(() => z.object({
  /** The definition's identity as deployed: part of what a resume must match. */
  hash: z.string().min(1),
  /** The execution's own timeout (the definition's `TimeoutSeconds`). */
  executionTimeoutSeconds: z.number().int().positive().optional(),
  /** The shortest timeout of the states that wait for a decision (the approval backstop). */
  approvalWaitSeconds: z.number().int().positive().optional(),
}));
export type DefinitionFacts = z.infer<ReturnType<typeof DefinitionFacts>>;
import { requestShape } from '../runs/request-shape.js';
import { copyPrefix, editedPrefix, finishCopy, forkPrefix, forkRunIdTaken, forkRunRecord, type ForkRequest } from '../runs/fork.js';
import { budgetCeilings, overBudgetRequest, withinCeilings } from '../runs/budget-caps.js';

export const StartRunInput = schemaOnFirstUse(() => z.object({
  event: z.unknown(),
  executionArn: z.string().min(1),
  definition: DefinitionFacts(),
}));

/**
 * `history`: where this execution's history bound starts (lambdas/guards/history.ts), for the
 * decisions after it (CallModel's); null when the execution has nothing to do (the definition's
 * result selector reads it either way).
 */
export type StartRunResult =
  | { runId: string; action: 'start' | 'resume'; status: RunRecord['status']; history: HistoryBound }
  | { runId: string; action: 'duplicate' | 'finished'; status: RunRecord['status']; history: null };

export interface StartRunDeps {
  agent: AgentDefinition;
  ledger: RunLedger & Pick<ExecutionRunLedger, 'noteExecutionRun'> & Pick<TurnLedger, 'listConversation' | 'recordTurn'> & Pick<ToolCallLedger, 'recordCall'> & Pick<GuardLedger, 'countStep'> & BlobStore;
  executions: Pick<Executions, 'isRunning' | 'stop'>;
  clock: Clock;
  codeVersion: string;
  /** The stack's model (`DurableAgent`'s `model` prop), over the agent's. @default the agent's `model` */
  defaultModel?: string;
  /** @default DEFAULT_PRICE_TABLE */
  priceTable?: PriceTable;
  /** Verifies the runs API's signature of a run's starter (runs/starter.ts). @default none: no run request's starter is recorded */
  starterMac?: DecisionMac;
  /** The deployment's ceilings on what a run request may ask for (runs/budget-caps.ts). @default none: the agent's */
  maxBudgets?: BudgetCaps;
}

/**
 * Creates the run record once (the run id is the idempotency key of the whole run) or resumes the
 * run that has it. A run still driven by another live execution is left alone.
 */
export function createStartRun(deps: StartRunDeps) {
  // The fingerprint of each model's runs, worked out once per instance (it hashes the prompt and
  // every tool's schema): every run a warm function starts is bound to the same few.
  const fingerprintOf = codeFingerprint(deps.agent, deps.codeVersion, deps.priceTable ?? DEFAULT_PRICE_TABLE);
  return async (input: unknown): Promise<StartRunResult> => {
    const { event, executionArn, definition } = parseOrThrow(StartRunInput(), input, 'StartRun input');
    const { agent } = deps;
    const request = runRequestFromEvent(agent, event);
    // An input that does not name its run (the schedule's event; a request leaving the id to the
    // agent's rule): noted under the execution, for the stack's shared functions that hear it end
    // and load no agent's code (runs/status-change.ts). Before the run is written: a run this
    // execution drives is always findable.
    if (namedRunId(event) === undefined) await deps.ledger.noteExecutionRun(executionArn, request.runId);
    // The schedule's own identity, or the starter the runs API signed: never the input's say-so.
    const startedBy = request.startedBy ?? (await verifiedStarter(deps.starterMac, event));
    const now = deps.clock.now();
    const prices = deps.priceTable ?? DEFAULT_PRICE_TABLE;
    // The run's model: the request's, else the stack's, else the agent's. An unpriced model is
    // refused here, before any call: a dollar budget must never silently read zero.
    const model = request.model ?? modelSpecOf(deps.defaultModel ?? agent.model, deps.defaultModel ? 'stack model' : `model of agent ${agent.name}`);
    for (const spec of [model, ...(agent.fallbackModel ? [agent.fallbackModel] : [])]) priceFor(spec, prices);
    const fingerprint = fingerprintOf(model);
    const definitionHash = definition.hash;
    const ceilings = budgetCeilings(agent, deps.maxBudgets);
    const config = withinCeilings(parseOrThrow(RunConfig(), { ...agent.budgets, ...request.config }, 'run config'), request.config, ceilings);
    // Refused before anything is written: a run whose approvals could not be decided in time.
    const problems = configProblems(config, definition);
    if (problems.length > 0) throw new InvalidInputError(`config.${problems.join('; config.')}`);
    const run: RunRecord = {
      kind: 'run',
      runId: request.runId,
      agent: agent.name,
      input: request.input,
      prompt: agent.prompt(request.input),
      model,
      config,
      fingerprint,
      definitionHash,
      priceTableVersion: prices.version,
      status: 'running',
      executionArn,
      executions: [executionArn],
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
      budgetExtensions: {},
      ...(startedBy && { startedBy }),
      ...(request.parent && { parent: request.parent }),
      ...(agent.version !== undefined && { agentVersion: agent.version }),
      // What replay compares a later version's requests against (runs/request-shape.ts).
      requestShape: requestShape(agent),
      ...ZERO_COUNTERS,
    };
    if (request.migrate) {
      // A migration moves a live run; it never starts one.
      const existing = await deps.ledger.getRun(run.runId);
      if (!existing) throw new InvalidInputError(`runId: no run ${run.runId} to migrate`);
      return migrate(deps, existing, request.migrate, { executionArn, definitionHash, now });
    }
    if (request.fork) return startFork(deps, run, { ...request, fork: request.fork }, executionArn, now);
    // A new run may ask for no more than its starter is allowed; a run already started keeps what it was given.
    const overBudget = overBudgetRequest(request.config, ceilings);
    // Said before the write that DynamoDB would refuse (one that exists was written, and resumes).
    const tooLarge = runRecordTooLarge({ input: run.input, prompt: run.prompt, requestShape: run.requestShape }, 'input');
    if (tooLarge && !(await deps.ledger.getRun(run.runId))) throw new InvalidInputError(tooLarge);
    if (overBudget === undefined && (await deps.ledger.createRun(run))) return { runId: run.runId, action: 'start', status: 'running', history: historyAtStart(0) };

    const existing = await deps.ledger.getRun(run.runId);
    if (!existing && overBudget) throw overBudget;
    if (!existing) throw new Error(`run ${run.runId} exists but cannot be read`);
    if (existing.agent !== run.agent) {
      throw new InvalidInputError(`runId: run ${run.runId} belongs to agent ${existing.agent}, not ${run.agent}`);
    }
    // A resume keeps the run's input and model.
    const other = otherRequestProblem(existing, { input: run.input, model: request.model });
    if (other) throw other;
    // A killed run is finished too, whichever switch killed it: lifting the global kill switch
    // lets new runs start, it does not bring back the runs it stopped (docs/guards.md).
    if (existing.status === 'succeeded' || existing.status === 'stopped' || existing.status === 'killed') {
      return { runId: existing.runId, action: 'finished', status: existing.status, history: null };
    }
    if (existing.executionArn === executionArn) return { runId: existing.runId, action: 'resume', status: 'running', history: historyAtStart(existing.historyEvents ?? 0) };
    // A child run settled into its parent spends no more (records/child-budget.ts); the ledger's attach refuses it too, whichever came first.
    if (existing.settledIntoParentAt !== undefined) throw new InvalidInputError(settledChildRefusal(existing));
    if (existing.status === 'running' && (await deps.executions.isRunning(existing.executionArn))) {
      return { runId: existing.runId, action: 'duplicate', status: 'running', history: null };
    }
    // A run stopped by an integrity failure waits for an operator (docs/guarantees.md): resumed
    // only on purpose, after `savepoint verify`, with --force.
    if (existing.status === 'failed' && existing.error?.error === ErrorNames.LedgerIntegrity && !request.force) {
      throw new LedgerIntegrityError(
        { runId: existing.runId, record: 'RUN' },
        `the run stopped on a ledger integrity failure (${existing.error.cause}): check it with \`savepoint verify ${existing.runId}\`, then resume with --force (input "force": true) or start a new run id`,
      );
    }
    // A fork whose StartRun died in the middle of copying its parent's turns finishes the copy first.
    await finishCopy(deps.ledger, existing, now);
    // A resume continues from what the ledger holds: the whole run must verify first (every seal,
    // and every record its counters count), or it is refused, never continued.
    const verification = await verifyRun(deps.ledger, existing.runId);
    if (verification.problems.length > 0) {
      throw new LedgerIntegrityError({ runId: existing.runId, record: 'RUN' }, `the run does not verify, so it is not resumed: ${verification.problems.join('; ')}`);
    }
    await meetRecordedCalls(deps, existing.runId, deps.clock.now());
    // Compared on the run's own model: a resume without --model is not a change of model.
    const resumed = fingerprintOf(existing.model);
    const changed = codeChanges(existing, resumed, definitionHash);
    if (changed.length > 0 && !request.force) {
      throw new InvalidInputError(
        `runId: run ${existing.runId} started on other code: ${changed.join('; ')}. ` +
          'Resuming would continue its conversation with an agent that did not start it: pass --force (input "force": true) to resume anyway, or start a new run id',
      );
    }
    const attached = await deps.ledger.attachExecution(existing.runId, executionArn, now, {
      previousArn: existing.executionArn,
      ...(changed.length > 0 ? { fingerprint: resumed, definitionHash } : {}),
    });
    // Another execution resumed the run between our read and our write: it drives the run.
    if (!attached) return { runId: existing.runId, action: 'duplicate', status: 'running', history: null };
    return { runId: existing.runId, action: 'resume', status: 'running', history: historyAtStart(existing.historyEvents ?? 0) };
  };
}

/**
 * `savepoint migrate`: this code takes the live run over from the execution that drives it, when
 * this version declares the run's version compatible. The ledger records who, when, and from which
 * version and fingerprint to which, and rebinds the run to this code in the same conditional write
 * that makes this execution its driver; then the superseded execution is stopped (its run is no
 * longer its own, so the stop kills nothing). Refused, nothing is written.
 */
async function migrate(
  deps: StartRunDeps,
  existing: RunRecord,
  ask: { to: string; by: string },
  { executionArn, definitionHash, now }: { executionArn: string; definitionHash: string; now: Date },
): Promise<StartRunResult> {
  const fingerprint = agentFingerprint({ ...deps.agent, model: existing.model }, deps.codeVersion, (deps.priceTable ?? DEFAULT_PRICE_TABLE).version);
  const stopSuperseded = (migration: MigrationRecord) =>
    deps.executions.stop(migration.from.executionArn, 'Savepoint.Migrated', `run ${existing.runId} migrated to ${describeVersion(migration.to.version, migration.to.fingerprint)} by ${migration.by}`);
  if (existing.executionArn === executionArn) {
    // A retry of this StartRun after its write: the migration stands; the stop may not have happened.
    const last = existing.migrations?.at(-1);
    if (last?.to.executionArn === executionArn) await stopSuperseded(last);
    return { runId: existing.runId, action: 'resume', status: 'running', history: historyAtStart(existing.historyEvents ?? 0) };
  }
  const verdict = migrationVerdict(existing, deps.agent, fingerprint, ask.to);
  if (!verdict.allowed) throw new InvalidInputError(`migrate: ${verdict.reason}`);
  const migration: MigrationRecord = {
    by: ask.by,
    at: now.toISOString(),
    from: { ...(existing.agentVersion !== undefined && { version: existing.agentVersion }), fingerprint: existing.fingerprint, executionArn: existing.executionArn },
    to: { ...(deps.agent.version !== undefined && { version: deps.agent.version }), fingerprint, executionArn },
  };
  const attached = await deps.ledger.attachExecution(existing.runId, executionArn, now, { previousArn: existing.executionArn, fingerprint, definitionHash, migration });
  // Another execution took the run over between our read and our write: nothing was migrated.
  if (!attached) throw new InvalidInputError(`migrate: run ${existing.runId} changed hands while migrating; look at its status and try again`);
  await stopSuperseded(migration);
  return { runId: existing.runId, action: 'resume', status: 'running', history: historyAtStart(existing.historyEvents ?? 0) };
}

/**
 * `savepoint fork`: creates the fork's run with its lineage, copies the parent's turns and calls
 * before the fork point (with the request's edited results) and counts them, and records the fork
 * on the parent (runs/fork.ts). The fork runs on the request's model, else the parent's. Other code
 * than the parent's takes a copied conversation over only under the rule a migration obeys
 * (runs/versions.ts); a fork at turn 1 copies none, so any code may. A retry of this StartRun finds
 * its own fork and repeats the idempotent copy; any other run under the id is refused.
 */
async function startFork(deps: StartRunDeps, draft: RunRecord, request: StartRequest & { fork: ForkRequest }, executionArn: string, now: Date): Promise<StartRunResult> {
  const { fork } = request;
  const parent = await deps.ledger.getRun(fork.from);
  if (!parent) throw new InvalidInputError(`fork.from: no run ${fork.from} in the ledger`);
  if (parent.agent !== draft.agent) throw new InvalidInputError(`fork.from: run ${fork.from} is a run of agent ${parent.agent}, not ${draft.agent}`);
  if (fork.from === draft.runId) throw new InvalidInputError('runId: a fork needs a run id of its own');
  const prices = (deps.priceTable ?? DEFAULT_PRICE_TABLE).version;
  if (fork.at > 1) {
    // Compared on the parent's model: another model alone is not other code (it is named in `edited`).
    const problem = continuationProblem(parent, deps.agent, agentFingerprint({ ...deps.agent, model: parent.model }, deps.codeVersion, prices));
    if (problem) throw new InvalidInputError(`fork.from: this code cannot continue run ${fork.from}'s first ${fork.at - 1} turns: ${problem}; or fork at turn 1, which copies none`);
  }
  const model = request.model ?? parent.model;
  const onModel = { ...draft, model, fingerprint: agentFingerprint({ ...deps.agent, model }, deps.codeVersion, prices) };
  const { turns, calls } = await deps.ledger.listConversation(fork.from);
  const prefix = editedPrefix(forkPrefix({ run: parent, turns, calls }, fork.at), fork);
  const forked = forkRunRecord(onModel, parent, fork, prefix);
  if (!(await deps.ledger.createRun(forked))) {
    const existing = await deps.ledger.getRun(draft.runId);
    const same = existing?.forkedFrom?.runId === fork.from && existing.forkedFrom.turn === fork.at && existing.executionArn === executionArn;
    if (!same) throw forkRunIdTaken(draft.runId);
  }
  await copyPrefix(deps.ledger, forked, prefix, now);
  // The new execution's history starts now, after the copied steps (counted by copyPrefix).
  const copied = await deps.ledger.getRun(forked.runId);
  return { runId: forked.runId, action: 'start', status: 'running', history: historyAtStart(0) };
}

/**
 * A tool call the dead execution recorded is not run again on resume — its record says it is
 * done, and CallModel goes on from the newest turn's first call without one; its step is counted
 * with the next model turn's reservation, or the run's end (ledger/open-turn.ts). The resume meets
 * each of the newest turn's: written again, the first record stands and nothing is written, and
 * what wraps the ledger sees the step repeated (the live export's replay span).
 */
async function meetRecordedCalls(deps: StartRunDeps, runId: string, now: Date): Promise<void> {
  const { turns, calls } = await deps.ledger.listConversation(runId);
  const newest = turns.at(-1)?.turn;
  for (const call of calls) if (call.turn === newest && call.status === 'completed') await deps.ledger.recordCall(call as ToolCallRecord & { status: 'completed' }, now);
}

/** What differs between the code a run started on and this code; empty when a resume is safe. */
export function codeChanges(run: RunRecord, fingerprint: string, definitionHash: string): string[] {
  const changes: string[] = [];
  if (run.fingerprint !== fingerprint) {
    changes.push(`agent ${run.fingerprint} → ${fingerprint} (code version, prompt, model, tool schemas or price table)`);
  }
  // Runs recorded before definitions were fingerprinted carry none: nothing to compare.
  if (run.definitionHash !== undefined && run.definitionHash !== definitionHash) {
    changes.push(`state machine definition ${run.definitionHash} → ${definitionHash}`);
  }
  return changes;
}
