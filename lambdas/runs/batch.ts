import { createHash } from 'node:crypto';
import * as z from 'zod';
import { stableJson, type AgentDefinition } from '../define.js';
import type { Identity } from '../approvals/policy.js';
import type { RunLedger } from '../ledger/ledger.js';
import { runIdPruned } from '../ledger/pruning.js';

/** What a batch reads of the ledger: its runs. */
type RunReader = Pick<RunLedger, 'getRun' | 'prunedRun'>;
import type { RunRecord } from '../records/ledger-records.js';
import { InvalidInputError, NotFoundError } from '../shared/errors.js';
import { readItems } from '../shared/item-reader.js';
import { DISTRIBUTED_MAP_MAX_CONCURRENCY, PAYLOAD_LIMIT_BYTES } from '../shared/limits.js';
import { parseOrThrow } from '../shared/validation.js';
import { clip } from '../shared/text.js';
import { RequestTooLarge, RunId } from './run-request.js';
import { BATCH_ID_PATTERN, BATCH_ID_RULE } from './run-id.js';

/**
 * Where a batch's items come from: its request's list (`items`, in the execution's input), or an
 * S3 object the Distributed Map reads itself (its ItemReader), a JSON array or a CSV file with a
 * header row. Each source is a Map state of its own (a Map's ItemReader and its InputType are
 * fixed in the definition), the request's chosen by a Choice at the start.
 */
export const BatchSources = ['items', 'json', 'csv'] as const;
export type BatchSource = (typeof BatchSources)[number];
/** What a manifest may be: the item sources that are S3 objects. */
export type ManifestFormat = Exclude<BatchSource, 'items'>;

/**
 * The states of one source's Map, by the names the twin binds its Tasks to (infra/batch-state-machine.ts
 * defines them, local/runtime/batches.ts binds them): no CDK here, so the twin reads them in an
 * install without it. State names are unique in a definition, the Maps' own states too: the list's
 * keep their first names, a manifest's carry its format.
 */
export function batchStates(source: BatchSource) {
  const of = (name: string) => (source === 'items' ? name : `${name} (${source} manifest)`);
  return {
    Items: of('Items'),
    StartItemRun: of('StartItemRun'),
    ItemEnded: of('ItemEnded?'),
    WaitForItemRun: of('WaitForItemRun'),
    CheckItemRun: of('CheckItemRun'),
    ItemDone: of('ItemDone'),
  } as const;
}
/** The template metadata that marks the stack's batch state machine (infra/batch-state-machine.ts), which the twin tells from the agent's (local/template/asl.ts). */
export const BATCH_STATE_MACHINE_METADATA = 'savepoint:batches';

/** The states of the list's Map, and the Choice that picks a batch's source. */
export const BatchStates = { ...batchStates('items'), ItemSource: 'ItemSource?', ManifestFormat: 'ManifestFormat?' } as const;

/**
 * A batch: one run per item of a list, at most `concurrency` live at once (issue 34, fan-out).
 * On AWS it is an execution of the agent's batch state machine (infra/batch-state-machine.ts, a
 * Distributed Map) named by the batch id; locally the twin runs the same definition
 * (local/runtime/batches.ts). Each item's run id derives from the batch id and the item — its
 * index, or the value of the field the batch names as `key` — and the runs API's start is
 * idempotent on a run id, so a batch started again (the same request, a restarted engine, a
 * retried Task) starts no run twice.
 *
 *   POST /batches {agent?, items[] | manifest{bucket,key,format?}, concurrency?, batchId?, key?} → 202 the batch (created: false when it existed)
 *   GET  /batches/{batchId}                                       → 200 its progress: each run's status, counted (a failed batch: its execution's error and cause)
 *
 * A manifest's items are read by the batch's execution (a Distributed Map's ItemReader); its
 * progress reads the manifest too (`BatchRoutesDeps.readManifest`, parsed as the ItemReader parses
 * it: lambdas/shared/item-reader.ts) to list each item's run, its first MAX_BATCH_ITEMS at most.
 */

/**
 * Items one batch may hold. Every item's run is read back for its progress (a GetItem each), and
 * the whole list travels in the execution's input, which Step Functions caps at 256 KiB (checked
 * too); a longer list belongs in an S3 manifest (`manifest`: the Distributed Map's ItemReader reads it).
 */
export const MAX_BATCH_ITEMS = 1_000;
/** How long an item's child execution waits between two reads of its run, on AWS. @default of `BatchRoutesDeps.pollSeconds` */
export const BATCH_POLL_SECONDS = 30;
/**
 * An S3 object of a batch's items. The bucket as S3 names buckets (3-63 lowercase letters, digits,
 * `.` and `-`, a letter or digit at each end:
 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html), the key 1-1024
 * characters. Its format: `csv` for a key ending in `.csv`, else `json`, unless named.
 */
export const BatchManifest = z
  .object({
    bucket: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'expected an S3 bucket name (3-63 lowercase letters, digits, "." or "-")'),
    key: z.string().min(1, 'expected an S3 object key').max(1024),
    format: z.enum(['json', 'csv']).optional(),
  })
  .strict();
export type BatchManifest = z.infer<typeof BatchManifest>;

/**
 * The bucket `savepoint serve`'s batches may read manifests from (its local S3: local/services/s3.ts):
 * the twin's batch state machine is granted it, as a deployment grants the buckets it names
 * (`batches.manifestBuckets`), and a manifest in any other bucket is refused by the twin's IAM
 * (the batch fails with States.ItemReaderFailed, AccessDenied), as on AWS.
 */
export const LOCAL_MANIFEST_BUCKET = 'savepoint-local';

/** A batch id leaves room in a run id (80 characters) for `-` and the item's index or key. */
export const BatchId = z.string().regex(BATCH_ID_PATTERN, BATCH_ID_RULE);

/** `POST /v1/batches`. */
export const StartBatchBody = z
  .object({
    /** The agent whose runs these are (the one this API runs, when named). */
    agent: z.string().min(1).max(200).optional(),
    /** The batch's id. @default a digest of the agent, the items and the key: the same list is the same batch */
    batchId: BatchId.optional(),
    /** One run's input per item, each checked by the agent's input schema. Either this or `manifest`. */
    items: z.array(z.unknown()).min(1, 'at least one item').optional(),
    /** The S3 object of the items (a JSON array, or a CSV file whose first row names the fields): read by the batch's execution. Either this or `items`. */
    manifest: BatchManifest.optional(),
    /** Runs live at once, at most. @default 10 */
    concurrency: z.number().int().min(1).max(DISTRIBUTED_MAP_MAX_CONCURRENCY).default(10),
    /** A field of each item whose value names its run (`<batchId>-<value>`), instead of its index. */
    key: z.string().min(1).max(100).optional(),
  })
  .strict()
  .superRefine((body, context) => {
    if ((body.items === undefined) === (body.manifest === undefined)) context.addIssue({ code: 'custom', path: body.items === undefined ? ['items'] : ['manifest'], message: 'a batch has either items or a manifest, one of the two' });
  });
export type StartBatchBody = z.infer<typeof StartBatchBody>;

/** A manifest as the batch's execution reads it: where, in which format, and the item field that names each run (`key`). */
export interface ExecutionManifest {
  bucket: string;
  key: string;
  format: ManifestFormat;
  /** The batch's `key`: each item's field that names its run. Absent: its index does. */
  itemKey?: string;
  /**
   * The object's ETag when the batch started (HeadObject): the same location holding another
   * object since is another batch (otherBatchProblem). Absent where nothing could read it.
   */
  etag?: string;
}

/** What the batch state machine's execution is started with (its input, and what the twin keeps of it). */
export interface BatchExecutionInput {
  batchId: string;
  agent: string;
  /** The list's runs (none for a manifest's batch: its execution reads them). */
  runs: { runId: string; input: unknown }[];
  /** Where the items are, when a manifest holds them (the Choice at the start picks its Map). */
  manifest?: ExecutionManifest;
  /** The function each item's Tasks invoke: the agent's item function (its ARN), the batch state machine serving every agent of its stack. */
  itemFunction: string;
  concurrency: number;
  pollSeconds: number;
  /** Who started the batch, as the runs API authenticated them: each item's run is started as them. */
  caller: Identity;
  createdAt: string;
}

/**
 * How a batch's execution stands: its status and, for one that ended without succeeding, the error
 * and cause Step Functions ended it with (DescribeExecution's `error` and `cause`: AWS caps them at
 * 256 and 32,768 characters; the twin keeps them in the batch's end file).
 */
export interface BatchExecutionState {
  status: string;
  error?: string;
  cause?: string;
}

/** Where batches are started and found: the batch state machine's executions (AWS), the twin's (local/runtime/batches.ts). */
export interface BatchStore {
  /** Starts the batch's execution, named by its id; `created: false` (and the batch as it was, and how its execution stands) when one exists. */
  start(batch: BatchExecutionInput): Promise<{ created: boolean; batch: BatchExecutionInput } & BatchExecutionState>;
  /** The batch and how its execution stands, or undefined when there is none. */
  get(batchId: string): Promise<({ batch: BatchExecutionInput } & BatchExecutionState) | undefined>;
}

/** A batch id that another batch holds (409): nothing started. */
export class BatchConflict extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BatchConflict';
  }
}

/**
 * Why `asked` is not the batch that holds its id again: another agent, other runs (other items, inputs or key),
 * another manifest, or (when the request named one) another concurrency. Undefined when it is
 * the same batch posted again, which answers that batch and starts nothing.
 */
export function otherBatchProblem(existing: BatchExecutionInput, asked: BatchExecutionInput, namedConcurrency: boolean): string | undefined {
  const held = `batchId: batch ${existing.batchId} exists`;
  const where = (manifest: ExecutionManifest | undefined) => (manifest ? `the manifest s3://${manifest.bucket}/${manifest.key}${manifest.itemKey === undefined ? '' : ` keyed by ${manifest.itemKey}`}` : 'a list of items');
  if (existing.agent !== asked.agent) return `${held} for agent ${existing.agent}, not ${asked.agent}: post this one under another batchId`;
  // The same location first; its version (ETag) apart, and only when both batches read one.
  const located = (manifest: ExecutionManifest | undefined) => stableJson(manifest ? { ...manifest, etag: null } : null);
  if (located(existing.manifest) !== located(asked.manifest)) return `${held} with ${where(existing.manifest)}, not ${where(asked.manifest)}: post this one under another batchId`;
  const [then, now] = [existing.manifest?.etag, asked.manifest?.etag];
  if (then !== undefined && now !== undefined && then !== now) {
    return `${held} with ${where(existing.manifest)} as it was then (ETag ${then}); the object there has changed since (ETag ${now}): post it under another batchId to run it`;
  }
  if (stableJson(existing.runs) !== stableJson(asked.runs)) {
    const index = existing.runs.findIndex((run, at) => stableJson(run) !== stableJson(asked.runs[at]));
    const at = index === -1 ? existing.runs.length : index;
    return `${held} with other items (${existing.runs.length} runs; they differ from items[${at}] on): post these under another batchId`;
  }
  if (namedConcurrency && existing.concurrency !== asked.concurrency) return `${held} with concurrency ${existing.concurrency}, not ${asked.concurrency}: a batch's concurrency is set when it starts`;
  return undefined;
}

/** A run's place in a batch: its ledger status, `pending` before StartRun has recorded it, `refused` when its start was. */
export type BatchRunStatus = RunRecord['status'] | 'pending' | 'refused';

/** What `POST /v1/batches` and `GET /v1/batches/{batchId}` answer. */
export interface BatchResource {
  /** The batch's id: its runs are `<batchId>-<index>` (or `<batchId>-<key value>`). */
  batchId: string;
  /** The agent whose runs these are. */
  agent: string;
  /** Runs live at once, at most. */
  concurrency: number;
  /** Where its items are, for a manifest's batch (whose runs the execution starts as it reads them; `runs` lists them as the manifest reads now). */
  manifest?: ExecutionManifest;
  /** The batch execution's status (`RUNNING`, `SUCCEEDED`, `FAILED`, `TIMED_OUT`, `ABORTED`). */
  status: string;
  /**
   * Why the batch did not succeed: the error its execution ended with, as Step Functions names it
   * (DescribeExecution's `error`), such as `States.ItemReaderFailed` (a manifest that cannot be read),
   * `States.ExceedToleratedFailureThreshold` (an item's child execution failed) or
   * `States.DataLimitExceeded` (a state's input or result over 256 KiB). Only when `status` is
   * `FAILED`, `TIMED_OUT` or `ABORTED` and the execution was given one.
   */
  error?: string;
  /** What the error says (DescribeExecution's `cause`), at most BATCH_CAUSE_MAX_CHARS characters. Only when the batch did not succeed and the execution was given one. */
  cause?: string;
  /** When the batch was first started (ISO 8601). */
  createdAt: string;
  /**
   * Each item's run, in the items' order. A manifest's batch lists its manifest's first
   * MAX_BATCH_ITEMS items' runs (each status read from the ledger: a run its execution has not
   * started yet is `pending`; an item whose key names no run is `refused`, as its item step refuses it).
   */
  runs: {
    runId: string;
    status: BatchRunStatus;
    /** Why its start is refused (`status: refused`), as its item step says it: the item the agent's input does not take, or a run id another request holds. */
    reason?: string;
  }[];
  /** How many runs are in each status: of the runs listed (with `truncated`, the manifest's first MAX_BATCH_ITEMS only). */
  counts: Partial<Record<BatchRunStatus, number>>;
  /** A manifest's batch only: its manifest holds more than MAX_BATCH_ITEMS items, and `runs` and `counts` are of its first MAX_BATCH_ITEMS. */
  truncated?: true;
  /** A manifest's batch only: why its runs are not listed (its manifest could not be read or parsed: `runs` is empty; the batch's `status` still says how it went). */
  runsUnlisted?: string;
  /** Only on a start: false when the batch existed (nothing was started). */
  created?: boolean;
}

export interface BatchRoutesDeps {
  agent: AgentDefinition;
  batches: BatchStore;
  runs: RunReader;
  clock: { now(): Date };
  /** The ARN of the agent's item function, which the batch's Tasks invoke. */
  itemFunction: string;
  /** Seconds an item waits between two reads of its run. @default BATCH_POLL_SECONDS */
  pollSeconds?: number;
  /** A manifest's text (S3 GetObject, as the runs function's role), to list a manifest batch's runs. @default none: they are listed empty, `runsUnlisted` says why */
  readManifest?: ManifestReader;
}

/** Reads a manifest in S3: the runs function's S3 client (lambdas/adapters/aws-clients.ts), the twin's S3 (local/runtime/local-stack.ts). */
export interface ManifestReader {
  /** The object's text (GetObject); with `etag`, only while the object is that one (If-Match: else S3's 412 PreconditionFailed). */
  text(bucket: string, key: string, etag?: string): Promise<string>;
  /** The object's ETag (HeadObject): undefined when S3 shows none (missing, access denied: its batch fails on it; `headEtag`). */
  etag(bucket: string, key: string): Promise<string | undefined>;
}

/** The HTTP status an AWS SDK error answered with (its `$metadata`); undefined for one with no answer (the network). */
const httpStatusOf = (error: unknown) => (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;

/**
 * A HeadObject's ETag, or undefined for an object S3 will not show (missing, denied, a bucket of
 * another region: any 3xx or 4xx), whose batch then starts and fails on it as before; a failure of
 * S3's side or the network (5xx, no answer) is thrown, for the caller to retry.
 */
export async function headEtag(head: () => Promise<{ ETag?: string }>): Promise<string | undefined> {
  try {
    return (await head()).ETag;
  } catch (error) {
    const status = httpStatusOf(error);
    if (status !== undefined && status >= 300 && status < 500) return undefined;
    throw error;
  }
}

/**
 * A manifest batch's runs as its execution names them: the manifest read and parsed as the Map's
 * ItemReader reads it, each item's run id by `itemRunId`, the first MAX_BATCH_ITEMS only (each
 * listed run is a ledger read). A manifest that cannot be read, or holds another object than the
 * one the batch started on (its ETag), lists none, and says why: the batch exists, and its progress answers.
 */
export async function manifestRuns(
  manifest: ExecutionManifest,
  batchId: string,
  read: ManifestReader | undefined,
  agent: Pick<AgentDefinition, 'name' | 'input'>,
): Promise<{ runs: { runId: string; input?: unknown; refused?: string }[]; truncated?: true; unlisted?: string }> {
  if (!read) return { runs: [], unlisted: 'this API reads no manifests' };
  const where = `s3://${manifest.bucket}/${manifest.key}`;
  let text: string;
  try {
    text = await read.text(manifest.bucket, manifest.key, manifest.etag);
  } catch (error) {
    // Another object put at its location since the batch read it: its runs are not that object's items.
    if (httpStatusOf(error) === 412) {
      return { runs: [], unlisted: `${where} holds another object since the batch started (not ETag ${manifest.etag}): the runs it started are not listed from it` };
    }
    // As the ItemReader words it (local/engine/local-engine.ts): the S3 error's name says why (AccessDenied, NoSuchKey).
    return { runs: [], unlisted: `Reading ${where} failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}` };
  }
  let items: unknown[];
  try {
    items = readItems(text, { InputType: manifest.format === 'csv' ? 'CSV' : 'JSON', CSVHeaderLocation: 'FIRST_ROW' }, where);
  } catch (error) {
    return { runs: [], unlisted: (error as Error).message };
  }
  const runs = items.slice(0, MAX_BATCH_ITEMS).map((item, index) => {
    let runId: string;
    try {
      runId = itemRunId(batchId, item, index, manifest.itemKey);
    } catch (error) {
      // Its item step refuses it under the index's name (createBatchItem): no run is started.
      return { runId: `${batchId}-${index}`, refused: reasonOf(error) };
    }
    // An item the agent's input refuses: its item step's start is refused (a 400, in these words), no run ever starts.
    try {
      return { runId, input: parseOrThrow(agent.input, item, `input of agent ${agent.name}`) };
    } catch (error) {
      return { runId, refused: reasonOf(error) };
    }
  });
  return { runs, ...(items.length > MAX_BATCH_ITEMS && { truncated: true as const }) };
}

/**
 * A refused item's reason, at most REFUSAL_REASON_MAX_CHARS: a listing's MAX_BATCH_ITEMS reasons
 * stay a small part of the runs function's answer, which Lambda caps at 6 MB (an item's message may
 * name every unknown field of a wide CSV row).
 */
export const REFUSAL_REASON_MAX_CHARS = 500;
const reasonOf = (error: unknown): string => clip(error instanceof Error ? error.message : String(error), REFUSAL_REASON_MAX_CHARS);

/**
 * An item's place by its run's record: `pending` before StartRun has recorded it; `refused` when the
 * run of its id is another request's (another input: the item's start was refused, a 409), which
 * is not this item's run whatever its status.
 */
function itemStatus(item: { runId: string; input?: unknown }, record: RunRecord | undefined): { status: BatchRunStatus; reason?: string } {
  if (!record) return { status: 'pending' };
  if ('input' in item && stableJson(record.input) !== stableJson(item.input)) return { status: 'refused', reason: `runId: run ${item.runId} was started with another input` };
  return { status: record.status };
}

/**
 * A failed batch's `cause`, at most this many characters: Step Functions' own cap of an execution's
 * cause (StopExecution, SendTaskFailure), so an AWS batch's cause is answered whole; the twin's,
 * which nothing caps, is cut to the same.
 */
export const BATCH_CAUSE_MAX_CHARS = 32_768;

/** The `error` and `cause` of a batch that ended without succeeding; nothing for one that runs or succeeded. */
function failureOf({ status, error, cause }: BatchExecutionState): Pick<BatchResource, 'error' | 'cause'> {
  if (status === 'RUNNING' || status === 'SUCCEEDED') return {};
  return { ...(error !== undefined && { error }), ...(cause !== undefined && { cause: clip(cause, BATCH_CAUSE_MAX_CHARS) }) };
}

export function createBatchRoutes(deps: BatchRoutesDeps) {
  const progress = async (batch: BatchExecutionInput, execution: BatchExecutionState): Promise<BatchResource> => {
    const { status } = execution;
    const listed = batch.manifest ? await manifestRuns(batch.manifest, batch.batchId, deps.readManifest, deps.agent) : { runs: batch.runs };
    const runs: BatchResource['runs'] = [];
    const placeOf = async (run: { runId: string; input?: unknown }) => {
      const record = await deps.runs.getRun(run.runId);
      // Never recorded, under the id of a run `savepoint prune` removed: its item's start was
      // refused (runs-api.ts). Read once the batch has ended, when every other item has its run.
      const pruned = !record && status !== 'RUNNING' ? await deps.runs.prunedRun(run.runId) : undefined;
      return pruned ? { status: 'refused' as const, reason: runIdPruned(run.runId, pruned.prunedAt).message } : itemStatus(run, record);
    };
    for (const run of listed.runs) runs.push({ runId: run.runId, ...('refused' in run && run.refused !== undefined ? { status: 'refused' as const, reason: run.refused } : await placeOf(run)) });
    const counts: BatchResource['counts'] = {};
    for (const run of runs) counts[run.status] = (counts[run.status] ?? 0) + 1;
    return {
      batchId: batch.batchId, agent: batch.agent, concurrency: batch.concurrency, ...(batch.manifest && { manifest: batch.manifest }), status, ...failureOf(execution), createdAt: batch.createdAt, runs, counts,
      ...('truncated' in listed && listed.truncated && { truncated: true as const }),
      ...('unlisted' in listed && listed.unlisted !== undefined && { runsUnlisted: listed.unlisted }),
    };
  };

  const start = async (caller: Identity, body: unknown): Promise<BatchResource> => {
    // The size first, before each item is parsed: a list too long is refused as a whole.
    const count = (body as { items?: unknown } | null)?.items;
    if (Array.isArray(count) && count.length > MAX_BATCH_ITEMS) throw new RequestTooLarge(`items: ${count.length} items, at most ${MAX_BATCH_ITEMS} per batch (split the list into several batches)`);
    const request = parseOrThrow(StartBatchBody, body, 'batch request');
    if (request.agent !== undefined && request.agent !== deps.agent.name) throw new InvalidInputError(`agent: no agent ${request.agent} here (this API runs ${deps.agent.name})`);
    const manifest: ExecutionManifest | undefined = request.manifest && {
      bucket: request.manifest.bucket,
      key: request.manifest.key,
      format: request.manifest.format ?? (request.manifest.key.toLowerCase().endsWith('.csv') ? 'csv' : 'json'),
      ...(request.key !== undefined && { itemKey: request.key }),
    };
    // Which object the manifest's location holds now: one put there since an earlier batch is not that batch posted again.
    const etag = manifest && (await deps.readManifest?.etag(manifest.bucket, manifest.key));
    // The default id names the location only (as before the ETag was read): a batch posted again across an upgrade keeps its id.
    const batchId = request.batchId ?? defaultBatchId(deps.agent.name, request.items ?? manifest, request.key);
    if (manifest && etag) manifest.etag = etag;
    const runs = request.items ? itemRuns(deps.agent, batchId, request.items, request.key) : [];
    const batch: BatchExecutionInput = {
      batchId,
      agent: deps.agent.name,
      runs,
      ...(manifest && { manifest }),
      itemFunction: deps.itemFunction,
      concurrency: request.concurrency,
      pollSeconds: deps.pollSeconds ?? BATCH_POLL_SECONDS,
      caller: { id: caller.id, via: caller.via, ...(caller.principal !== undefined && { principal: caller.principal }) },
      createdAt: deps.clock.now().toISOString(),
    };
    const size = Buffer.byteLength(JSON.stringify(batch), 'utf8');
    if (size > PAYLOAD_LIMIT_BYTES) throw new RequestTooLarge(`items: the batch is ${size} bytes as its execution's input, over Step Functions' ${PAYLOAD_LIMIT_BYTES} (fewer or smaller items per batch)`);
    const started = await deps.batches.start(batch);
    const other = !started.created && otherBatchProblem(started.batch, batch, (body as { concurrency?: unknown }).concurrency !== undefined);
    if (other) throw new BatchConflict(other);
    // A batch posted again answers as it is (it may have ended), as its GET does.
    return { ...(await progress(started.batch, started)), created: started.created };
  };

  const get = async (rawBatchId: string): Promise<BatchResource> => {
    const batchId = parseOrThrow(BatchId, rawBatchId, 'batchId');
    const found = await deps.batches.get(batchId);
    if (!found) throw new NotFoundError(`batchId: no batch ${batchId}`);
    return progress(found.batch, found);
  };

  return { start, get };
}

/** The same agent, items (or manifest) and key: the same batch (a client that retries its POST starts nothing new). */
function defaultBatchId(agent: string, items: unknown, key: string | undefined): string {
  return `batch-${createHash('sha256').update(stableJson({ agent, items, key: key ?? null })).digest('hex').slice(0, 16)}`;
}

/** Each item checked as its run's input, and its run id: `<batchId>-<index>`, or `<batchId>-<item[key]>`. */
export function itemRuns(agent: AgentDefinition, batchId: string, items: unknown[], key: string | undefined): { runId: string; input: unknown }[] {
  const seen = new Map<string, number>();
  return items.map((item, index) => {
    const input = parseOrThrow(agent.input, item, `items[${index}] (input of agent ${agent.name})`);
    const runId = itemRunId(batchId, item, index, key);
    const before = seen.get(runId);
    if (before !== undefined) throw new InvalidInputError(`items[${index}].${key}: the same run id (${runId}) as items[${before}]; a batch's keys are unique`);
    seen.set(runId, index);
    return { runId, input };
  });
}

/** An item's run id: `<batchId>-<index>`, or `<batchId>-<item[key]>` (a list's items are checked by `itemRuns`, a manifest's by the item step as each starts). */
export function itemRunId(batchId: string, item: unknown, index: number, key: string | undefined): string {
  const named = key === undefined ? String(index) : (item as Record<string, unknown> | null)?.[key];
  if (key !== undefined && typeof named !== 'string' && typeof named !== 'number') throw new InvalidInputError(`items[${index}].${key}: the batch's key names each item's run, and this item has no string or number there`);
  return parseOrThrow(RunId(), `${batchId}-${String(named)}`, `items[${index}]${key === undefined ? '' : `.${key}`} (its run id)`);
}

const Caller = z.object({ id: z.string().min(1), via: z.string(), principal: z.string().optional() });

/** StartItemRun's and CheckItemRun's event (infra/batch-state-machine.ts): a list's item names its run; a manifest's item is the object read, at its index. */
export const BatchItemEvent = z.union([
  z.object({ action: z.literal('start'), executionArn: z.string().optional(), batchId: BatchId, agent: z.string(), runId: RunId(), input: z.unknown(), caller: Caller }).strict(),
  z.object({ action: z.literal('start'), executionArn: z.string().optional(), batchId: BatchId, agent: z.string(), item: z.unknown(), index: z.number().int().min(0), manifest: z.object({ itemKey: z.string().optional() }).passthrough(), caller: Caller }).strict(),
  z.object({ action: z.literal('check'), executionArn: z.string().optional(), batchId: BatchId, agent: z.string(), runId: RunId() }).strict(),
]);

/** What an item step answers: its run, where it is, and whether the item is done with it. */
export interface BatchItemResult {
  runId: string;
  status: BatchRunStatus;
  ended: boolean;
  /** Why its start was refused (`status: refused`). */
  error?: string;
}

export interface BatchItemDeps {
  /** The runs API's start (lambdas/runs/runs-api.ts): idempotent on the run id. */
  startRun: (caller: Identity, body: unknown) => Promise<unknown>;
  runs: RunReader;
}

/**
 * The item function: `start` starts the item's run through the runs API's own start path (a run
 * that exists is found, not started again); `check` reads its status. A start the runs API
 * refuses (a 400: the item's input, its price) ends the item as `refused` rather than failing the
 * batch; anything else fails the Task, which the state machine retries.
 */
export function createBatchItem(deps: BatchItemDeps) {
  const statusOf = async (runId: string): Promise<BatchItemResult> => {
    const status = (await deps.runs.getRun(runId))?.status ?? 'pending';
    return { runId, status, ended: status !== 'running' && status !== 'pending' };
  };
  return async (raw: unknown): Promise<BatchItemResult> => {
    const event = parseOrThrow(BatchItemEvent, raw, 'batch item');
    if (event.action === 'check') return statusOf(event.runId);
    // A manifest's item names its run here, as it starts: an item whose run id cannot be is refused, not the batch.
    let runId = 'runId' in event ? event.runId : `${event.batchId}-${event.index}`;
    try {
      if ('item' in event) runId = itemRunId(event.batchId, event.item, event.index, event.manifest.itemKey);
      await deps.startRun(event.caller as Identity, { agent: event.agent, runId, input: 'item' in event ? event.item : event.input });
    } catch (error) {
      if (error instanceof InvalidInputError) return { runId, status: 'refused', ended: true, error: error.message };
      throw error;
    }
    return statusOf(runId);
  };
}
