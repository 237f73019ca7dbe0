import { createHash } from 'node:crypto';
import { blobKey, expiresAt, type Current, type ItemsStep, type Key, type Step, type Stored } from './protocol.js';
import { InvalidInputError } from '../shared/errors.js';
import { runKey, tokenKey, type RunRecord, type RunStatus } from '../records/ledger-records.js';
import { counted } from '../shared/text.js';

/**
 * Retention (`savepoint prune`), once for both engines, in protocol.ts's shape: each rule a pure
 * function of the records it reads, the conditions of its writes named where they are written.
 * The engines beneath give it two primitives more than the protocol's (storage-ledger.ts:
 * `queryRunItems`, the items a run owns as stored; `deleteItems`, each on its condition), and
 * retention.ts runs the procedure on them:
 *
 *   prunes ─► the newest record's runs, what is left of them where the run record is gone: deleted (leftOfPrune)
 *   listRuns ─► pruneVerdict each (pending approvals: one index query, when a run may qualify) ─► prunePlan (what --dry-run prints)
 *   per group of runs (pruneGroupFull: RUNS_PER_PRUNE_RECORD runs, WRITES_BYTES_PER_PRUNE_RECORD of write keys):
 *     queryRunItems each ─► put, for each run, that its id was pruned   unconditionally (prunedRunKey: createRun refuses the id)
 *     ─► pruneRecordOf ─► put the sealed record                         IF_NO_PRUNE_RECORD (absent)
 *     ─► deleteItems: each run record                                   IF_RUN_UNCHANGED (the basis read)
 *          └─ refused: the run changed since it was read (a fork was recorded on it): it is kept, and
 *             the record put again without it                           IF_RECORD_UNCHANGED (the record put)
 *     ─► deleteItems: the rest of the runs' items                       unconditionally (nothing writes to a run once its record is gone)
 *
 * The items that say the runs' ids were pruned come first, then the record: no run is ever gone
 * without either. A prune that stops half-way leaves a
 * run the record names with items still in the ledger: `verifyPrunes` reports it (pruneRecordProblems),
 * and the next prune finishes it — deleting what is left where the run record is gone, or pruning
 * the run again under a record of its own where it is not.
 */

/**
 * What `prune` removed, kept in the ledger as a sealed record of its own (partition `PRUNED`), so
 * that `savepoint verify` can tell a pruned run from a lost one: the run ids, how many records
 * they held, and the sha256 of those records in key order (what a kept copy can be checked against).
 */
export interface PruneRecord {
  kind: 'prune';
  prunedAt: string;
  /** Runs that finished (succeeded, stopped or killed) before this instant were pruned. */
  finishedBefore: string;
  runIds: string[];
  /** Records removed: the runs' own, their task tokens and blobs. */
  records: number;
  digest: string;
  /**
   * The idempotency key of each side-effecting call the runs claimed, sorted (`writeKeyOf`): what
   * they may have done to the outside world, kept after their calls are gone, so that a provider's
   * record made under one of them is still known to the ledger (local/runtime/world-facts.ts). Absent when none.
   */
  writes?: string[];
}

/** The idempotency key of a record that is a side-effecting tool call (what a PruneRecord's `writes` lists); undefined otherwise. */
export function writeKeyOf(record: Record<string, unknown>): string | undefined {
  return record['kind'] === 'tool' && record['effect'] === 'write' && typeof record['idempotencyKey'] === 'string' ? record['idempotencyKey'] : undefined;
}

/** The partition of the prune records; `index` tells two prunes of one instant apart. */
export const pruneKey = (prunedAt: string, index: number): Key => ({ pk: 'PRUNED', sk: `PRUNE#${prunedAt}#${index}` });
export const PRUNED_PK = pruneKey('', 0).pk;

/**
 * Where the ledger says that a run id was pruned (its run record removed by `savepoint prune`): a
 * partition of each id's own, so that creating a run checks one item (protocol.ts `createRun`)
 * and a fleet's starts spread over the table. A pruned run's id names that run for good: a new run
 * under it would take the same idempotency keys its tools were given, the claims that guarded them
 * gone with its records, and repeat what it did.
 */
export const prunedRunKey = (runId: string): Key => ({ pk: `PRUNEDRUN#${runId}`, sk: 'PRUNED' });

/** What a prunedRunKey item holds: the run and the prune that removed it. */
export interface PrunedRunRecord {
  kind: 'pruned-run';
  runId: string;
  prunedAt: string;
}

/** The item a prune puts at prunedRunKey before the run goes: DynamoDB's TTL removes it RETENTION_SECONDS after the prune, as it does a record after it is written. */
export const prunedRunItem = (runId: string, now: Date): Stored => ({ record: { kind: 'pruned-run', runId, prunedAt: now.toISOString() } satisfies PrunedRunRecord, meta: { expiresAt: expiresAt(now) } });

/** The refusal of a new run under the id of a run `savepoint prune` removed (createRun; the runs API says it before it starts anything). */
export function runIdPruned(runId: string, prunedAt: string): InvalidInputError {
  return new InvalidInputError(`runId: run ${runId} was pruned at ${prunedAt} (savepoint prune): its id names that run for good, and a new run under it would repeat what it did; pass another run id`);
}

/**
 * protocol.ts `createRun`'s step with the item at `prunedRunKey` beside it: a run that exists is
 * found as before; a new one is refused under a pruned id, or written with that item checked
 * absent — one transaction, so a prune between the two cannot slip by.
 */
export function createRunUnlessPruned(pruned: Current<PrunedRunRecord>, created: Step<boolean>, runId: string): ItemsStep<boolean> {
  if (!('write' in created)) return created;
  if (pruned) return { fail: runIdPruned(runId, pruned.record.prunedAt) };
  return { writes: [undefined, created.write], answer: created.answer };
}

/**
 * The partitions a run owns (records.ts, blobKey): what a prune removes. Business-key effects
 * (EFFECT#…) are not a run's: they guard across runs, with the results they record stored by
 * reference (protocol.ts `effectBlobKey`), so a later run of the key still reads them.
 */
export const runPartitions = (runId: string): string[] => [runKey(runId).pk, tokenKey({ runId, turn: 0, call: 0 }).pk, blobKey(runId, '', 0).pk];

/** The statuses of a run that is over: a `failed` run is not (it can be resumed). */
export const FINISHED_STATUSES: ReadonlySet<RunStatus> = new Set(['succeeded', 'stopped', 'killed']);

/** What a run still holds that a prune must not take away (the facts `pruneVerdict` reads besides the run). */
export interface PruneFacts {
  /** Approvals of the run still pending (the pendingApprovals index): a person may yet decide one. */
  readonly pendingApprovals: number;
  /** The status of each of the run's forks (`run.forks`) still in the ledger; absent: pruned or never finished copying. */
  readonly forkStatus: (runId: string) => RunStatus | undefined;
}

export type PruneVerdict = { prune: true } | { prune: false; reason: string };

/**
 * Whether a run's records may be removed by `prune --finished-before`, the one rule both engines
 * apply: it finished (succeeded, stopped, killed) before the cutoff; no approval of it is still
 * pending; and no fork of it is live (running, or failed and resumable) — a `reuse` fork answers its
 * writes from the parent's records, a `dry` one its reads, for as long as it runs.
 */
export function pruneVerdict(run: RunRecord, finishedBefore: Date, facts: PruneFacts): PruneVerdict {
  if (!FINISHED_STATUSES.has(run.status)) return { prune: false, reason: `it is ${run.status}` };
  if (run.finishedAt === undefined || run.finishedAt >= finishedBefore.toISOString()) return { prune: false, reason: `it finished at ${run.finishedAt ?? '(unrecorded)'}` };
  if (facts.pendingApprovals > 0) return { prune: false, reason: `it has ${counted(facts.pendingApprovals, 'approval')} pending` };
  const live = (run.forks ?? []).find((fork) => {
    const status = facts.forkStatus(fork.runId);
    return status !== undefined && !FINISHED_STATUSES.has(status);
  });
  return live ? { prune: false, reason: `its fork ${live.runId} is ${facts.forkStatus(live.runId)} and reads its records` } : { prune: true };
}

/**
 * Problems with one prune record (none: `[]`), whichever engine holds it: its seal is checked when
 * it is read; here, it must agree with itself and with the ledger. `present`: the runs it names
 * that still have records in the ledger (a run that came back under a pruned id, or a prune that
 * stopped half-way: `savepoint prune` again finishes it).
 */
export function pruneRecordProblems(prune: PruneRecord, present: readonly string[]): string[] {
  const where = `prune record of ${prune.prunedAt}`;
  const problems: string[] = [];
  if (prune.runIds.length === 0 || prune.records < prune.runIds.length) problems.push(`${where}: ${prune.runIds.length} runs and ${prune.records} records do not add up`);
  if (!/^sha256:[0-9a-f]{64}$/.test(prune.digest)) problems.push(`${where}: its digest ${prune.digest} is not a sha256`);
  for (const runId of present) problems.push(`${where}: run ${runId} is pruned, yet its records are in the ledger`);
  return problems;
}

/** Runs named by one prune record: it stays a small item (DynamoDB's 400 KB is the bound), whatever a prune removes. */
export const RUNS_PER_PRUNE_RECORD = 500;
/** Bytes of write keys (PruneRecord `writes`) one prune record holds at most, besides a single run's own. */
export const WRITES_BYTES_PER_PRUNE_RECORD = 200 * 1024;

/**
 * An item a run owns, as its engine stores it (`queryRunItems`): its key, the engine's mark of
 * the version read (what a conditional delete compares), `digest` — the item as the engine holds
 * it, what a prune record's digest covers (the embedded log's line; DynamoDB's key and seal) — and
 * the idempotency key of a side-effecting call (writeKeyOf).
 */
export interface RunItem {
  readonly key: Key;
  readonly basis: unknown;
  readonly digest: string;
  readonly writeKey?: string;
}

/** One delete of `deleteItems`: of the item at `key` if it is still the version `expected` read (its basis), or, without it, whatever it is. */
export interface ItemDelete {
  readonly key: Key;
  readonly expected?: { readonly basis: unknown };
}

/** What a prune removes, and what it keeps of the runs that finished before its date, with the rule's reason (`prune --dry-run`). */
export interface PrunePlan {
  /** The runs it removes, sorted. */
  readonly prune: readonly string[];
  /** The runs that finished (succeeded, stopped, killed) before the date that it keeps, sorted, each with why. */
  readonly kept: readonly { readonly runId: string; readonly reason: string }[];
}

/**
 * The plan of a prune: `pruneVerdict` over each run that finished before `finishedBefore`.
 * `pending`: each run's pending approvals, when they were asked for (`undefined`: not yet, counted
 * as none — `wantsPending` says whether to ask).
 */
export function prunePlan(runs: readonly RunRecord[], finishedBefore: Date, pending?: ReadonlyMap<string, number>): PrunePlan {
  const status = new Map(runs.map((run) => [run.runId, run.status]));
  const before = finishedBefore.toISOString();
  const prune: string[] = [];
  const kept: { runId: string; reason: string }[] = [];
  for (const run of [...runs].sort((a, b) => (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0))) {
    if (!FINISHED_STATUSES.has(run.status) || run.finishedAt === undefined || run.finishedAt >= before) continue;
    const verdict = pruneVerdict(run, finishedBefore, { pendingApprovals: pending?.get(run.runId) ?? 0, forkStatus: (id) => status.get(id) });
    if (verdict.prune) prune.push(run.runId);
    else kept.push({ runId: run.runId, reason: verdict.reason });
  }
  return { prune, kept };
}

/** Whether a prune needs the pending approvals: only when a run may go (as if none were pending). */
export const wantsPending = (runs: readonly RunRecord[], finishedBefore: Date): boolean => prunePlan(runs, finishedBefore).prune.length > 0;

/** The pending approvals counted by run. */
export function pendingByRun(approvals: readonly { runId: string }[]): Map<string, number> {
  const pending = new Map<string, number>();
  for (const { runId } of approvals) pending.set(runId, (pending.get(runId) ?? 0) + 1);
  return pending;
}

/** Bytes of write keys a run's items add to a prune record. */
export const writeBytes = (items: readonly RunItem[]): number => items.reduce((sum, item) => sum + (item.writeKey?.length ?? 0), 0);

/** Whether a group of runs (`runs` of them, `bytes` of write keys) is full before a run of `bytes` more joins it: its record stays a small item. */
export const pruneGroupFull = (group: { runs: number; bytes: number }, bytes: number): boolean =>
  group.runs >= RUNS_PER_PRUNE_RECORD || (group.runs > 0 && group.bytes + bytes > WRITES_BYTES_PER_PRUNE_RECORD);

/** The record of a prune of `runIds` (sorted), from their items as stored: how many, their digest in key order, their write keys. */
export function pruneRecordOf(runIds: readonly string[], items: ReadonlyMap<string, readonly RunItem[]>, finishedBefore: Date, now: Date): PruneRecord {
  const digest = createHash('sha256');
  let records = 0;
  const writes = new Set<string>();
  for (const runId of runIds) {
    for (const item of items.get(runId) ?? []) {
      digest.update(item.digest).update('\n');
      records++;
      if (item.writeKey !== undefined) writes.add(item.writeKey);
    }
  }
  return {
    kind: 'prune',
    prunedAt: now.toISOString(),
    finishedBefore: finishedBefore.toISOString(),
    runIds: [...runIds],
    records,
    digest: `sha256:${digest.digest('hex')}`,
    ...(writes.size > 0 && { writes: [...writes].sort() }),
  };
}

/** A prune record as the item it is put as. */
export const pruneItem = (record: PruneRecord): Stored => ({ record: record as unknown as Record<string, unknown>, meta: {} });

/** The condition of a prune record's first put: none at its key yet (two prunes at one instant would meet here). */
export const IF_NO_PRUNE_RECORD = undefined;

/** Each run record deleted on the condition that it is the one read (IF_RUN_UNCHANGED): a run that changed since (a fork recorded on it) stays. */
export function runRecordDeletes(runIds: readonly string[], items: ReadonlyMap<string, readonly RunItem[]>): { runId: string; delete: ItemDelete }[] {
  return runIds.flatMap((runId) => {
    const run = items.get(runId)?.find((item) => item.key.pk === runKey(runId).pk && item.key.sk === runKey(runId).sk);
    return run ? [{ runId, delete: { key: run.key, expected: { basis: run.basis } } }] : [];
  });
}

/** The rest of the pruned runs' items, deleted unconditionally: nothing writes to a run once its record is gone. */
export function restDeletes(pruned: readonly string[], items: ReadonlyMap<string, readonly RunItem[]>): ItemDelete[] {
  return pruned.flatMap((runId) => (items.get(runId) ?? []).filter((item) => !(item.key.pk === runKey(runId).pk && item.key.sk === runKey(runId).sk)).map((item) => ({ key: item.key })));
}

/** What is left of a run a prune record names (`left`: its items now), to delete: all of it when its run record is gone (a prune that stopped half-way), else nothing (the run is there: a prune of its own takes it). */
export function leftOfPrune(runId: string, left: readonly RunItem[]): ItemDelete[] {
  return left.length > 0 && !left.some((item) => item.key.pk === runKey(runId).pk && item.key.sk === runKey(runId).sk) ? left.map((item) => ({ key: item.key })) : [];
}

/** The prune records, oldest first (by the instant of each; the key order among those of one instant). */
export function oldestFirst(records: PruneRecord[]): PruneRecord[] {
  return records.sort((a, b) => (a.prunedAt < b.prunedAt ? -1 : a.prunedAt > b.prunedAt ? 1 : 0));
}

/** What `savepoint prune` and `verify` use of a ledger that keeps prune records (storage-ledger.ts `pruningOf`): the same on both engines. */
export interface Pruning {
  /**
   * Removes the records of every run `pruneVerdict` lets go — its run, turns, calls and approvals,
   * its task tokens and blobs — under sealed PruneRecords naming them (the procedure at the top).
   * Business-key effects (EFFECT#…) are kept, with their results stored by reference (`effectBlobKey`):
   * a later run of the key is answered from them. They keep a refund a pruned run paid from being paid
   * again. The records written, oldest first; none when no run qualified (nothing is written then).
   */
  prune(finishedBefore: Date, now: Date): Promise<PruneRecord[]>;
  /** What `prune(finishedBefore, …)` would remove now, and what it would keep of the runs that finished before the date, with why; removes nothing. */
  planPrune(finishedBefore: Date): Promise<PrunePlan>;
  /** The prune records, oldest first, each verified: one that does not verify throws, or, with `onDamaged`, is named to it and left out. */
  prunes(onDamaged?: (error: Error) => void): Promise<PruneRecord[]>;
  /** Problems with the prune records (none: `[]`): one that does not verify, named; one that disagrees with itself or the ledger (`pruneRecordProblems`). */
  verifyPrunes(): Promise<string[]>;
}

/**
 * What a ledger that keeps prune records answers to a reader: the part of `Pruning` a running
 * engine's ledger also serves to the other commands over loopback (remote-ledger.ts), which prune
 * nothing while it runs (`verify --all` checks the prune records then too).
 */
export type PruneRecords = Pick<Pruning, 'prunes' | 'planPrune' | 'verifyPrunes'>;
