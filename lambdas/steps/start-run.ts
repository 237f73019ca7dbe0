import { createHash } from 'node:crypto';
import { z } from 'zod';
import { agentFingerprint, defaultRunId, stableJson, type AgentDefinition } from '../define.js';
import type { Ledger } from '../ledger/ledger.js';
import { RunConfig, ZERO_COUNTERS, type MigrationRecord, type RunRecord } from '../ledger/records.js';
import { DEFAULT_PRICE_TABLE, priceFor, type PriceTable } from '../models/prices.js';
import { formatModelSpec, parseModelSpec } from '../models/spec.js';
import { configProblems, executionLimits } from '../approvals/policy.js';
import { ErrorNames, InvalidInputError, LedgerIntegrityError } from '../shared/errors.js';
import { verifyRun } from '../ledger/seal.js';
import { parseOrThrow } from '../shared/validation.js';
import type { Clock, Executions } from './ports.js';
import { describeVersion, migrationVerdict } from './versions.js';

export const RunId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,80}$/, 'expected 1-80 letters, digits, "-" or "_" (it names the execution)');

/** A run started by a person or a script (`savepoint run`, `StartExecution`, the client). */
export const RunRequest = z
  .object({
    runId: RunId.optional(),
    /** The agent's input, validated by the agent's own `input` schema. */
    input: z.unknown(),
    config: RunConfig.partial().strict().optional(),
    /** The model of this run (`provider:model-id`), instead of the stack's or the agent's. */
    model: z.string().min(1).optional(),
    /** Resume even though the code changed since the run started (the operator's `--force`). */
    force: z.boolean().optional(),
    /** Who starts the run (separation of duties: they may not approve its requests). */
    startedBy: z.string().min(1).max(200).optional(),
    /**
     * `savepoint migrate`: move this live run to the code that runs this StartRun, which must be
     * agent version `to` and declare the run's version compatible (steps/versions.ts).
     */
    migrate: z.object({ to: z.string().min(1).max(64), by: z.string().min(1).max(200) }).strict().optional(),
  })
  .strict();
export type RunRequest = z.infer<typeof RunRequest>;

/** The EventBridge scheduled event (events/scheduled-event.json) that starts the nightly run. */
export const ScheduledEvent = z.object({
  'detail-type': z.literal('Scheduled Event'),
  source: z.literal('aws.events'),
  time: z.iso.datetime({ offset: true }),
});

export const StartRunInput = z.object({
  event: z.unknown(),
  executionArn: z.string().min(1),
});

export type StartRunResult = { runId: string; action: 'start' | 'resume' | 'duplicate' | 'finished'; status: RunRecord['status'] };

export interface StartRequest {
  runId: string;
  input: unknown;
  config: Partial<RunConfig>;
  /** Normalized `provider:model-id`, when the request names one. */
  model?: string;
  force?: boolean;
  startedBy?: string;
  migrate?: { to: string; by: string };
}

/**
 * The run an event asks for. A scheduled event becomes the input the agent derives from its time
 * (e.g. the day before), under the run id of that input: a second delivery of the same event
 * (EventBridge delivers at least once) resumes or joins the same run instead of starting another.
 */
export function runRequestFromEvent(agent: AgentDefinition, event: unknown): StartRequest {
  if (typeof event === 'object' && event !== null && 'detail-type' in event) {
    const scheduled = parseOrThrow(ScheduledEvent, event, 'scheduled event');
    if (!agent.scheduled) throw new InvalidInputError(`scheduled event: agent ${agent.name} does not run on a schedule (it defines no \`scheduled\`)`);
    const input = parseOrThrow(agent.input, agent.scheduled(new Date(scheduled.time)), `input of agent ${agent.name} for the scheduled event`);
    return { runId: runIdOf(agent, input), input, config: {}, startedBy: `schedule:${scheduled.source}` };
  }
  const request = parseOrThrow(RunRequest, event, 'run input');
  const input = parseOrThrow(agent.input, request.input, `input of agent ${agent.name}`);
  // Only the settings the request names: the partial schema fills in every default, which would
  // override the agent's own budgets.
  const named = Object.keys((event as { config?: object }).config ?? {});
  const config = Object.fromEntries(Object.entries(request.config ?? {}).filter(([key]) => named.includes(key)));
  const model = request.model === undefined ? undefined : modelSpecOf(request.model, 'model');
  return {
    runId: request.runId ?? runIdOf(agent, input),
    input,
    config,
    force: request.force,
    ...(model && { model }),
    ...(request.startedBy && { startedBy: request.startedBy }),
    ...(request.migrate && { migrate: request.migrate }),
  };
}

/** The run id of an input: the agent's own rule, or its name and a hash of the input. */
export function runIdOf(agent: AgentDefinition, input: unknown): string {
  return parseOrThrow(RunId, agent.runId?.(input) ?? defaultRunId(agent, input), `run id of agent ${agent.name}`);
}

export interface StartRunDeps {
  agent: AgentDefinition;
  ledger: Ledger;
  executions: Pick<Executions, 'isRunning' | 'definitionOf' | 'stop'>;
  clock: Clock;
  codeVersion: string;
  /** The stack's model (`DurableAgent`'s `model` prop), over the agent's. @default the agent's `model` */
  defaultModel?: string;
  /** @default DEFAULT_PRICE_TABLE */
  priceTable?: PriceTable;
}

/** `spec` normalized, or an error naming the field it came from. */
function modelSpecOf(spec: string, field: string): string {
  try {
    return formatModelSpec(parseModelSpec(spec));
  } catch (error) {
    throw new InvalidInputError(`${field}: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Creates the run record once (the run id is the idempotency key of the whole run) or resumes the
 * run that has it. A run still driven by another live execution is left alone.
 */
export function createStartRun(deps: StartRunDeps) {
  return async (input: unknown): Promise<StartRunResult> => {
    const { event, executionArn } = parseOrThrow(StartRunInput, input, 'StartRun input');
    const { agent } = deps;
    const request = runRequestFromEvent(agent, event);
    const now = deps.clock.now();
    const prices = deps.priceTable ?? DEFAULT_PRICE_TABLE;
    // The run's model: the request's, else the stack's, else the agent's. An unpriced model is
    // refused here, before any call: a dollar budget must never silently read zero.
    const model = request.model ?? modelSpecOf(deps.defaultModel ?? agent.model, deps.defaultModel ? 'stack model' : `model of agent ${agent.name}`);
    for (const spec of [model, ...(agent.fallbackModel ? [agent.fallbackModel] : [])]) priceFor(spec, prices);
    const fingerprint = agentFingerprint({ ...agent, model }, deps.codeVersion, prices.version);
    const definition = await deps.executions.definitionOf(executionArn);
    const definitionHash = hashDefinition(definition);
    const config = parseOrThrow(RunConfig, { ...agent.budgets, ...request.config }, 'run config');
    // Refused before anything is written: a run whose approvals could not be decided in time.
    const problems = configProblems(config, executionLimits(definition));
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
      ...(request.startedBy && { startedBy: request.startedBy }),
      ...(agent.version !== undefined && { agentVersion: agent.version }),
      ...ZERO_COUNTERS,
    };
    if (request.migrate) {
      // A migration moves a live run; it never starts one.
      const existing = await deps.ledger.getRun(run.runId);
      if (!existing) throw new InvalidInputError(`runId: no run ${run.runId} to migrate`);
      return migrate(deps, existing, request.migrate, executionArn, definitionHash, now);
    }
    if (await deps.ledger.createRun(run)) return { runId: run.runId, action: 'start', status: 'running' };

    const existing = await deps.ledger.getRun(run.runId);
    if (!existing) throw new Error(`run ${run.runId} exists but cannot be read`);
    if (existing.agent !== run.agent) {
      throw new InvalidInputError(`runId: run ${run.runId} belongs to agent ${existing.agent}, not ${run.agent}`);
    }
    if (stableJson(existing.input) !== stableJson(run.input)) {
      throw new InvalidInputError(`runId: run ${run.runId} was started with the input ${stableJson(existing.input)}, not ${stableJson(run.input)}`);
    }
    // A resume keeps the run's model; naming another one is a new run (its conversation so far
    // was with the first model, and its dollars were priced for it).
    if (request.model !== undefined && request.model !== existing.model) {
      throw new InvalidInputError(`model: run ${existing.runId} runs on ${existing.model}, not ${request.model}: start a new run id to use another model`);
    }
    if (existing.status === 'succeeded' || existing.status === 'stopped') {
      return { runId: existing.runId, action: 'finished', status: existing.status };
    }
    if (existing.executionArn === executionArn) return { runId: existing.runId, action: 'resume', status: 'running' };
    if (existing.status === 'running' && (await deps.executions.isRunning(existing.executionArn))) {
      return { runId: existing.runId, action: 'duplicate', status: 'running' };
    }
    // A run stopped by an integrity failure waits for an operator (README, guarantees): resumed
    // only on purpose, after `savepoint verify`, with --force.
    if (existing.status === 'failed' && existing.error?.error === ErrorNames.LedgerIntegrity && !request.force) {
      throw new LedgerIntegrityError(
        { runId: existing.runId, record: 'RUN' },
        `the run stopped on a ledger integrity failure (${existing.error.cause}): check it with \`savepoint verify ${existing.runId}\`, then resume with --force (input "force": true) or start a new run id`,
      );
    }
    // A resume continues from what the ledger holds: the whole run must verify first (every seal,
    // and every record its counters count), or it is refused, never continued.
    const verification = await verifyRun(deps.ledger, existing.runId);
    if (verification.problems.length > 0) {
      throw new LedgerIntegrityError({ runId: existing.runId, record: 'RUN' }, `the run does not verify, so it is not resumed: ${verification.problems.join('; ')}`);
    }
    // Compared on the run's own model: a resume without --model is not a change of model.
    const resumed = existing.model === model ? fingerprint : agentFingerprint({ ...agent, model: existing.model }, deps.codeVersion, prices.version);
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
    if (!attached) return { runId: existing.runId, action: 'duplicate', status: 'running' };
    return { runId: existing.runId, action: 'resume', status: 'running' };
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
  executionArn: string,
  definitionHash: string,
  now: Date,
): Promise<StartRunResult> {
  const fingerprint = agentFingerprint({ ...deps.agent, model: existing.model }, deps.codeVersion, (deps.priceTable ?? DEFAULT_PRICE_TABLE).version);
  const stopSuperseded = (migration: MigrationRecord) =>
    deps.executions.stop(migration.from.executionArn, 'Savepoint.Migrated', `run ${existing.runId} migrated to ${describeVersion(migration.to.version, migration.to.fingerprint)} by ${migration.by}`);
  if (existing.executionArn === executionArn) {
    // A retry of this StartRun after its write: the migration stands; the stop may not have happened.
    const last = existing.migrations?.at(-1);
    if (last?.to.executionArn === executionArn) await stopSuperseded(last);
    return { runId: existing.runId, action: 'resume', status: 'running' };
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
  return { runId: existing.runId, action: 'resume', status: 'running' };
}

/** Hash of a state machine definition (JSON text): the same definition, however it is spaced, has one hash. */
export function hashDefinition(definition: string): string {
  return createHash('sha256').update(JSON.stringify(JSON.parse(definition))).digest('hex').slice(0, 16);
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
