import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { isAgentPath, loadAgent } from '../../local/runtime/agents.js';
import { AGENT_HELP, defaultAgent, deployed, err, nextCommand, out, printJson, stateDir } from '../program.js';
import { exitCodeOfSignal, signalCame, watchStopSignals, type StopSignal, type StopSignals } from '../signals.js';
import { describe, parseOptions, UsageError, wholeNumberOption } from '../errors.js';
import { isRefusal } from '../../client/runs-api-error.js';
import { clip, counted } from '../../lambdas/shared/text.js';
import type { RunsClient } from '../../client/connect.js';

const NAME_THE_AGENT = 'name the agent: --agent <name|path> (or $SAVEPOINT_AGENT)';
const BatchOptions = z.object({
  agent: z.string({ error: NAME_THE_AGENT }).min(1, NAME_THE_AGENT),
  items: z.string().min(1).optional(),
  manifest: z.string().regex(/^s3:\/\/[^/]+\/.+$/, 'expected s3://<bucket>/<key>').optional(),
  format: z.enum(['json', 'csv']).optional(),
  concurrency: wholeNumberOption(z.number().min(1)).optional(),
  batchId: z.string().min(1).optional(),
  key: z.string().min(1).optional(),
  wait: z.boolean(),
  json: z.boolean(),
});

/** `savepoint batch`: one run per item of a JSON list, or of an S3 object, through the runs API (`POST /v1/batches`). */
export function registerBatchCommand(program: Command): void {
  program
    .command('batch')
    .description('start one run per item of a JSON list or an S3 object, at most --concurrency at once (a Distributed Map on AWS); started again, the same batch starts no run twice')
    .option('--agent <name|path>', AGENT_HELP, defaultAgent)
    .option('--items <file.json>', 'a JSON array: one run input per item (at most 1,000)')
    .option('--manifest <s3://bucket/key>', 'an S3 object of the items instead, read by the batch itself: a JSON array, or a CSV file whose first row names the fields (serve reads s3://savepoint-local/<key> from the file <state dir>/s3/savepoint-local/<key>, each / of the key written %2F)')
    .option('--format <json|csv>', 'how to read --manifest (default: csv for a key ending in .csv, else json)')
    .option('--concurrency <n>', 'runs live at once, at most (default: 10)')
    .option('--batch-id <id>', 'the batch id (1-40 letters, digits, - or _): each run is <batch-id>-<index> (default: a digest of the agent, the items and the key)')
    .option('--key <field>', 'a field of each item whose value names its run (<batch-id>-<value>) instead of its index')
    .option('--wait', 'wait until every run has ended, printing the progress; exit as run does: 1 when the batch did not succeed or a run failed, was refused or never started, 3 when one was stopped or killed', false)
    .option('--json', 'print the batch as JSON', false)
    .addHelpText(
      'after',
      `
It goes to the runs API of the savepoint serve of the state directory (start it first), or of the
stack named by --stack. The batch's progress: savepoint batch … --wait, or GET /v1/batches/<id>.`,
    )
    .action(async (raw: Record<string, unknown>) => {
      const options = parseOptions(BatchOptions, raw);
      if ((options.items === undefined) === (options.manifest === undefined)) throw new UsageError('--items or --manifest: a batch has either a list of items or a manifest, one of the two');
      if (options.format !== undefined && options.manifest === undefined) throw new UsageError('--format: it says how to read --manifest, and none was given');
      const source = options.items !== undefined ? { items: readItems(options.items) } : { manifest: manifestOf(options.manifest!, options.format) };
      const { connect } = await import('../../client/connect.js');
      const stack = deployed();
      const agentName = isAgentPath(options.agent) ? (await loadAgent(options.agent)).agent.name : options.agent;
      // No engine serves the state directory (or the stack has no runs API): said in one sentence, exit 2.
      const client = await (stack.stack ? connect({ stack: stack.stack, ...(stack.region && { region: stack.region }), agent: agentName }) : connect({ stateDir: stateDir() })).catch((error: unknown) => {
        throw new UsageError(error instanceof Error ? error.message : String(error));
      });
      // Ctrl-C (or SIGTERM) while it waits stops the waiting, not the batch: caught before anything is said.
      const signals = options.wait ? watchStopSignals() : undefined;
      try {
        let batch = await client.startBatch({ agent: agentName, ...source, ...(options.concurrency !== undefined && { concurrency: options.concurrency }), ...(options.batchId && { batchId: options.batchId }), ...(options.key && { key: options.key }) });
        const what = batch.manifest ? `of the items of s3://${batch.manifest.bucket}/${batch.manifest.key}` : `of ${counted(batch.runs.length, 'run')}`;
        if (!options.json) out(`savepoint: batch ${batch.batchId} ${what} of ${batch.agent}, at most ${batch.concurrency} at once${batch.created ? '' : ' (it existed: nothing new was started)'}`);
        let shown = progress(batch);
        while (signals && batch.status === 'RUNNING') {
          const signal = await pauseUnlessStopped(2_000, signals);
          if (signal) {
            (options.json ? err : out)(`savepoint: ${signalCame(signal)} — stopped waiting; batch ${batch.batchId} goes on without this command (the same command again waits for it, and starts no run twice)`);
            process.exitCode = exitCodeOfSignal(signal);
            return;
          }
          batch = (await client.batch(batch.batchId)) ?? batch;
          // A line when the progress moves, not every poll; a batch whose runs wait for people says
          // so (it may wait for them up to their approvals' timeout), and where to decide.
          const now = `${progress(batch)}${await waitingForPeople(client, batch)}`;
          if (!options.json && now !== shown) out(`savepoint: batch ${batch.batchId}: ${(shown = now)}`);
        }
        if (options.json) printJson(batch);
        // Waited for, or found ended without succeeding (started again): how it went, and why it failed.
        else if (options.wait || batch.error !== undefined) out([`savepoint: batch ${batch.batchId} ${batch.status.toLowerCase()}: ${progress(batch)}`, ...failure(batch), ...refusals(batch)].join('\n'));
        // Waited for, it exits as `savepoint run` does for one run (a nightly job sees it): 1 when the
        // batch did not succeed or a run of it failed, was refused or never started, else 3 when one was stopped by a guard or killed.
        if (options.wait) process.exitCode = batchExitCode(batch);
      } catch (error) {
        // The API's refusal of what was asked (400, 404, 413) is a usage error: exit 2, nothing started.
        if (isRefusal(error)) throw new UsageError(error.message);
        throw error;
      } finally {
        signals?.dispose();
      }
    });
}

/** Waits `ms`, or less when a stop signal comes first: that signal, else undefined. */
async function pauseUnlessStopped(ms: number, signals: StopSignals): Promise<StopSignal | undefined> {
  let timer: NodeJS.Timeout | number | undefined;
  try {
    return await Promise.race([signals.received, new Promise<undefined>((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** `s3://<bucket>/<key>` as the runs API's manifest (the API checks the bucket's and key's form). */
function manifestOf(url: string, format: 'json' | 'csv' | undefined): { bucket: string; key: string; format?: 'json' | 'csv' } {
  const [, bucket, key] = /^s3:\/\/([^/]+)\/(.+)$/.exec(url)!;
  return { bucket: bucket!, key: key!, ...(format && { format }) };
}

function readItems(file: string): unknown[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--items: ${file} cannot be read: ${describe(error)}`);
  }
  let items: unknown;
  try {
    items = JSON.parse(text);
  } catch {
    throw new UsageError(`--items: ${file} is not JSON`);
  }
  if (!Array.isArray(items)) throw new UsageError(`--items: ${file} holds no JSON array (one run input per item)`);
  return items;
}

/**
 * 0 every run succeeded · 1 the batch did not succeed, or a run failed, was refused or never started
 * (`pending` once the batch has ended: each item waits for its run's end) · 3 a run was stopped by a guard or killed.
 */
export function batchExitCode(batch: { status: string; runs: readonly { status: string }[] }): number {
  if (batch.status !== 'SUCCEEDED' || batch.runs.some((run) => run.status === 'failed' || run.status === 'refused' || run.status === 'pending')) return 1;
  return batch.runs.some((run) => run.status === 'stopped' || run.status === 'killed') ? 3 : 0;
}

/** ` (n waiting for a person: …)` when running runs of the batch wait for a decision, else nothing. */
async function waitingForPeople(client: Pick<RunsClient, 'approvals'>, batch: { runs: readonly { runId: string; status: string }[] }): Promise<string> {
  const running = new Set(batch.runs.filter((run) => run.status === 'running').map((run) => run.runId));
  if (running.size === 0) return '';
  const waiting = new Set((await client.approvals()).filter((approval) => running.has(approval.runId)).map((approval) => approval.runId));
  return waiting.size === 0 ? '' : ` (${waiting.size} waiting for a person: ${nextCommand('approvals')})`;
}

/** A cause longer than this is cut in `savepoint batch`'s output (`--json` prints it whole, as the runs API answers it). */
export const PRINTED_CAUSE_MAX_CHARS = 500;

/** Why the batch did not succeed, as its execution ended (`  States.DataLimitExceeded: …`), on one line, its cause cut at PRINTED_CAUSE_MAX_CHARS. */
export function failure(batch: { error?: string; cause?: string }): string[] {
  if (batch.error === undefined && batch.cause === undefined) return [];
  const cause = batch.cause === undefined ? '' : `: ${clip(batch.cause.replace(/\s+/g, ' ').trim(), PRINTED_CAUSE_MAX_CHARS)}`;
  return [`  ${batch.error ?? 'failed'}${cause}`];
}

/** Why each refused run of a batch was (its item's input, its run id), the first few, one line each. */
function refusals(batch: { runs: readonly { runId: string; status: string; reason?: string }[] }, shown = 10): string[] {
  const refused = batch.runs.filter((run) => run.status === 'refused');
  const lines = refused.slice(0, shown).map((run) => `  ${run.runId} refused: ${run.reason ?? 'its start was refused'}`);
  return refused.length > shown ? [...lines, `  … and ${refused.length - shown} more (--json lists each)`] : lines;
}

/** The runs of a batch counted by status, or why none are listed (a manifest that cannot be read). */
function progress(batch: { counts: Record<string, number | undefined>; runsUnlisted?: string }): string {
  const byStatus = Object.entries(batch.counts)
    .map(([status, count]) => `${count} ${status}`)
    .join(', ');
  return [byStatus || 'no run listed', ...(batch.runsUnlisted ? [batch.runsUnlisted] : [])].join('; ');
}
