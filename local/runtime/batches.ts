/**
 * The twin's batch state machine: the definition infra/batch-state-machine.ts synthesizes, on an
 * engine of its own, its Tasks bound in process to the item step (lambdas/runs/batch.ts
 * `createBatchItem`). On AWS a batch's execution outlives any process; here it lives in this
 * one, so each batch's input is kept in the state directory (`batches/<batchId>.json`, written
 * before its execution starts) with its end (`<batchId>.end.json`): `resume` starts again every
 * batch a process that died left unfinished, and the runs API's idempotent start finds the runs
 * it had started, so none starts twice.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BatchStates, type BatchExecutionInput, type BatchStore } from '../../lambdas/runs/batch.js';
import { LocalEngine, type Timers } from '../engine/local-engine.js';
import type { AslDefinition } from '../template/asl.js';

export interface LocalBatchesOptions {
  agent: string;
  /**
   * The batch state machine's definition (local/template/batch.ts `batchAsl`), read when the first
   * batch starts: a checkout synthesizes it with the CDK, seconds that a run with no batch never pays.
   */
  definition: () => Promise<AslDefinition>;
  /** The item step: StartItemRun's and CheckItemRun's handler. */
  item: (event: unknown) => Promise<unknown>;
  /** Where batches are kept across restarts. @default memory */
  stateDir?: string;
  now?: () => Date;
  timers?: Timers;
  /** Ms instead of each item's poll wait (tests). @default the batch's pollSeconds */
  pollWaitMs?: number;
  log?: (line: string) => void;
}

export function localBatches(options: LocalBatchesOptions) {
  const dir = options.stateDir && join(options.stateDir, 'batches');
  if (dir) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const memory = new Map<string, { batch: BatchExecutionInput; end?: string }>();
  const invoke = (payload: unknown) => options.item(payload);
  const made = (definition: AslDefinition) =>
    new LocalEngine({
      definition,
      stateMachineArn: `arn:aws:states:us-east-1:000000000000:stateMachine:${options.agent}-batches`,
      tasks: { [BatchStates.StartItemRun]: { waitForTaskToken: false, invoke }, [BatchStates.CheckItemRun]: { waitForTaskToken: false, invoke } },
      ...(options.now && { now: options.now }),
      ...(options.timers && { timers: options.timers }),
      ...(options.pollWaitMs !== undefined && { waitTimeOverrides: { [BatchStates.WaitForItemRun]: options.pollWaitMs } }),
    });
  let engine: Promise<LocalEngine> | undefined;
  const engineOf = () => (engine ??= options.definition().then(made));
  let closing = false;

  const file = (batchId: string, suffix = '') => join(dir!, `${batchId}${suffix}.json`);
  const write = (path: string, value: unknown) => {
    writeFileSync(`${path}.tmp`, JSON.stringify(value), { mode: 0o600 });
    renameSync(`${path}.tmp`, path);
  };
  const read = (batchId: string): { batch: BatchExecutionInput; end?: string } | undefined => {
    if (!dir) return memory.get(batchId);
    if (!existsSync(file(batchId))) return undefined;
    const batch = JSON.parse(readFileSync(file(batchId), 'utf8')) as BatchExecutionInput;
    const end = existsSync(file(batchId, '.end')) ? (JSON.parse(readFileSync(file(batchId, '.end'), 'utf8')) as { status: string }).status : undefined;
    return { batch, ...(end !== undefined && { end }) };
  };

  /** Runs the batch's execution and records its end (not the abort of a closing engine: that batch resumes). */
  const run = async (batch: BatchExecutionInput) => {
    const engine = await engineOf();
    if (closing) return;
    const { executionArn } = engine.startExecution({ name: batch.batchId, input: JSON.stringify(batch) });
    void engine.waitForExecution(executionArn).then((ended) => {
      if (closing || ended.status === 'ABORTED') return;
      if (dir) write(file(batch.batchId, '.end'), { status: ended.status, at: (ended.stopDate ?? new Date()).toISOString(), ...(ended.error && { error: ended.error, cause: ended.cause }) });
      else memory.set(batch.batchId, { batch, end: ended.status });
      options.log?.(`batch ${batch.batchId}: ${ended.status.toLowerCase()}${ended.error ? ` (${ended.error}: ${ended.cause})` : ''}`);
    });
  };

  const store: BatchStore = {
    start: async (batch) => {
      const existing = read(batch.batchId);
      if (existing) return { created: false, batch: existing.batch };
      if (dir) write(file(batch.batchId), batch);
      else memory.set(batch.batchId, { batch });
      await run(batch);
      return { created: true, batch };
    },
    get: async (batchId) => {
      const found = read(batchId);
      return found && { batch: found.batch, status: found.end ?? 'RUNNING' };
    },
  };

  return {
    store,
    /** The batches' engine, made when the first batch starts (a test reads its executions). */
    engine: () => engineOf(),
    /** Starts again each kept batch that has not ended (a process that died left it); returns their ids. */
    resume: (): string[] => {
      if (!dir) return [];
      const unfinished = readdirSync(dir)
        .filter((name) => /^[A-Za-z0-9_-]+\.json$/.test(name) && !name.endsWith('.end.json'))
        .map((name) => name.slice(0, -'.json'.length))
        .filter((batchId) => !existsSync(file(batchId, '.end')));
      for (const batchId of unfinished) void run(read(batchId)!.batch);
      return unfinished;
    },
    close: async () => {
      closing = true;
      await (await engine)?.close();
    },
  };
}

export type LocalBatches = ReturnType<typeof localBatches>;
