import { z } from 'zod';
import { IsoDate } from '../agent/domain.js';
import { PRICE_TABLE } from '../agent/prices.js';
import { RECONCILER, agentFingerprint } from '../agent/reconciler.js';
import type { Ledger } from '../ledger/ledger.js';
import { RunConfig, ZERO_COUNTERS, type RunRecord } from '../ledger/records.js';
import { InvalidInputError } from '../shared/errors.js';
import { parseOrThrow } from '../shared/validation.js';
import type { Clock, Executions } from './ports.js';

export const RunId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,80}$/, 'expected 1-80 letters, digits, "-" or "_" (it names the execution)');

/** A run started by a person or a script (`savepoint run`, `StartExecution`). */
export const RunRequest = z
  .object({
    runId: RunId.optional(),
    runDate: IsoDate,
    config: RunConfig.partial().strict().optional(),
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

/**
 * The nightly run at `time` reconciles the day before it, under a run id derived from that day:
 * a second delivery of the same scheduled event (EventBridge delivers at least once) resumes or
 * joins the same run instead of starting another.
 */
export function runRequestFromEvent(event: unknown): { runId: string; runDate: string; config: Partial<RunConfig> } {
  if (typeof event === 'object' && event !== null && 'detail-type' in event) {
    const scheduled = parseOrThrow(ScheduledEvent, event, 'scheduled event');
    const day = new Date(Date.parse(scheduled.time) - 24 * 3600 * 1000).toISOString().slice(0, 10);
    return { runId: `nightly-${day}`, runDate: day, config: {} };
  }
  const request = parseOrThrow(RunRequest, event, 'run input');
  return { runId: request.runId ?? `refunds-${request.runDate}`, runDate: request.runDate, config: request.config ?? {} };
}

export interface StartRunDeps {
  ledger: Ledger;
  executions: Executions;
  clock: Clock;
  codeVersion: string;
}

/**
 * Creates the run record once (the run id is the idempotency key of the whole run) or resumes the
 * run that has it. A run still driven by another live execution is left alone.
 */
export function createStartRun(deps: StartRunDeps) {
  return async (input: unknown): Promise<StartRunResult> => {
    const { event, executionArn } = parseOrThrow(StartRunInput, input, 'StartRun input');
    const request = runRequestFromEvent(event);
    const now = deps.clock.now();
    const fingerprint = agentFingerprint(deps.codeVersion);
    const run: RunRecord = {
      kind: 'run',
      runId: request.runId,
      agent: RECONCILER.name,
      runDate: request.runDate,
      prompt: RECONCILER.userPrompt(request.runDate),
      model: RECONCILER.model,
      config: RunConfig.parse(request.config),
      fingerprint,
      priceTableVersion: PRICE_TABLE.version,
      status: 'running',
      executionArn,
      executions: [executionArn],
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
      budgetExtensions: {},
      ...ZERO_COUNTERS,
    };
    if (await deps.ledger.createRun(run)) return { runId: run.runId, action: 'start', status: 'running' };

    const existing = await deps.ledger.getRun(run.runId);
    if (!existing) throw new Error(`run ${run.runId} exists but cannot be read`);
    if (existing.runDate !== run.runDate) {
      throw new InvalidInputError(`runId: run ${run.runId} reconciles ${existing.runDate}, not ${run.runDate}`);
    }
    if (existing.status === 'succeeded' || existing.status === 'stopped') {
      return { runId: existing.runId, action: 'finished', status: existing.status };
    }
    if (existing.executionArn === executionArn) return { runId: existing.runId, action: 'resume', status: 'running' };
    if (existing.status === 'running' && (await deps.executions.isRunning(existing.executionArn))) {
      return { runId: existing.runId, action: 'duplicate', status: 'running' };
    }
    if (existing.fingerprint !== fingerprint) {
      throw new InvalidInputError(
        `runId: run ${existing.runId} was started by agent version ${existing.fingerprint}; this is ${fingerprint} (prompt, model, tools or prices changed)`,
      );
    }
    await deps.ledger.attachExecution(existing.runId, executionArn, now);
    return { runId: existing.runId, action: 'resume', status: 'running' };
  };
}
