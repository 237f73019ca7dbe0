import type { DamagedRunOptions } from './ledger.js';
import type { Maybe } from './maybe.js';
import type { Key, Stored } from './protocol.js';
import * as pruning from './pruning.js';
import { PRUNED_PK, pruneKey, type ItemDelete, type PruneRecord, type Pruning, type RunItem } from './pruning.js';
import type { StorageCall } from './storage-call.js';
import type { LedgerIntegrityError } from '../shared/errors.js';
import type { ApprovalRecord, RunRecord } from '../records/ledger-records.js';

/** What the retention procedure uses of a storage engine: storage-ledger.ts's primitives and reads, bound to it. */
export interface RetentionStore {
  guard(call: StorageCall): void;
  read(keys: readonly Key[]): Maybe<(Stored | undefined)[]>;
  put(key: Key, item: Stored, expected: Stored | undefined | 'any'): Maybe<boolean>;
  queryPartition(pk: string, fromSk?: string, onDamaged?: (error: LedgerIntegrityError) => void): Maybe<Stored[]>;
  queryRunItems(runId: string, first?: number): Maybe<RunItem[]>;
  deleteItems(deletes: readonly ItemDelete[]): Maybe<boolean[]>;
  listRuns(limit: number, options: DamagedRunOptions): Promise<RunRecord[]>;
  listPendingApprovals(): Promise<ApprovalRecord[]>;
}

/**
 * `savepoint prune` on a storage engine (storage-ledger.ts): pruning.ts's procedure, the same on
 * both engines, run on the engine's primitives.
 */
export function retentionOn(store: RetentionStore): Pruning {
  const prunes: Pruning['prunes'] = async (onDamaged) => {
    store.guard({ query: { pk: PRUNED_PK } });
    return pruning.oldestFirst((await store.queryPartition(PRUNED_PK, undefined, onDamaged)).map(({ record }) => record as unknown as PruneRecord));
  };

  const planPrune: Pruning['planPrune'] = async (finishedBefore) => {
    // A run whose record does not verify is not pruned: it is left for `verify` to name.
    const runs = await store.listRuns(Number.MAX_SAFE_INTEGER, { onDamaged: () => undefined });
    const pending = pruning.wantsPending(runs, finishedBefore) ? pruning.pendingByRun(await store.listPendingApprovals()) : undefined;
    return pruning.prunePlan(runs, finishedBefore, pending);
  };

  /**
   * Says of each run a prune removes that its id was pruned (pruning.ts `prunedRunKey`): no new run
   * is created under it. Before anything of the runs goes, so that no crash leaves a run gone and
   * its id unguarded (one kept after all, changed since it was read, is found by createRun as it
   * is). A grant without these items (`grantPrune` before 0.18.0) stops the prune here, whole.
   */
  const putPrunedRuns = async (runIds: readonly string[], now: Date): Promise<void> => {
    for (const runId of runIds) {
      const key = pruning.prunedRunKey(runId);
      try {
        store.guard({ put: [key] });
        await store.put(key, pruning.prunedRunItem(runId, now), 'any');
      } catch (error) {
        if ((error as Error).name !== 'AccessDeniedException') throw error;
        throw new Error(`prune: ${(error as Error).message} — a prune says of each run it removes that its id was pruned (${key.pk}), which the grant of savepoint 0.18.0 allows (LedgerTable.grantPrune): deploy the stack with it; nothing was pruned`);
      }
    }
  };

  /**
   * Prunes `runIds` (their items read) under one record (pruning.ts, the procedure). Throws when
   * every one of them changed first: its record then names runs still there, which the next prune
   * prunes again under a record of its own (what `verify` reports until then).
   */
  const pruneRuns = async (runIds: string[], items: ReadonlyMap<string, RunItem[]>, finishedBefore: Date, now: Date, index: number): Promise<PruneRecord> => {
    await putPrunedRuns(runIds, now);
    const key = pruneKey(now.toISOString(), index);
    let record = pruning.pruneRecordOf(runIds, items, finishedBefore, now);
    store.guard({ put: [key] });
    if (!(await store.put(key, pruning.pruneItem(record), pruning.IF_NO_PRUNE_RECORD))) throw new Error(`prune: a prune record ${key.sk} exists already (two prunes at one instant?): run it again`);
    const runDeletes = pruning.runRecordDeletes(runIds, items);
    const deleted = await store.deleteItems(runDeletes.map((run) => run.delete));
    const pruned = runDeletes.filter((_, at) => deleted[at]).map((run) => run.runId);
    if (pruned.length < runIds.length) {
      // A run that changed between the scan and its delete is kept whole: the record says so before anything else goes (IF_RECORD_UNCHANGED).
      const current = (await store.read([key]))[0];
      record = pruning.pruneRecordOf(pruned, items, finishedBefore, now);
      if (pruned.length === 0 || !(await store.put(key, pruning.pruneItem(record), current))) {
        throw new Error(`prune: runs ${runIds.filter((id) => !pruned.includes(id)).join(', ')} changed while they were pruned; run prune again`);
      }
    }
    await store.deleteItems(pruning.restDeletes(pruned, items));
    return record;
  };

  const prune: Pruning['prune'] = async (finishedBefore, now) => {
    const earlier = await prunes();
    const newest = earlier.at(-1);
    // A prune that stopped half-way is finished first: what is left of its runs whose run record is gone, deleted.
    if (newest) for (const runId of newest.runIds) await store.deleteItems(pruning.leftOfPrune(runId, await store.queryRunItems(runId)));
    const plan = await planPrune(finishedBefore);
    const written: PruneRecord[] = [];
    let group: { runIds: string[]; bytes: number; items: Map<string, RunItem[]> } = { runIds: [], bytes: 0, items: new Map() };
    const flush = async () => {
      if (group.runIds.length > 0) written.push(await pruneRuns(group.runIds, group.items, finishedBefore, now, earlier.length + written.length));
      group = { runIds: [], bytes: 0, items: new Map() };
    };
    for (const runId of plan.prune) {
      const items = await store.queryRunItems(runId);
      const bytes = pruning.writeBytes(items);
      if (pruning.pruneGroupFull({ runs: group.runIds.length, bytes: group.bytes }, bytes)) await flush();
      group.items.set(runId, items);
      group.runIds.push(runId);
      group.bytes += bytes;
    }
    await flush();
    return written;
  };

  // One query of its run's partition per pruned run.
  const verifyPrunes: Pruning['verifyPrunes'] = async () => {
    const problems: string[] = [];
    for (const record of await prunes((error) => problems.push(error.message))) {
      const present: string[] = [];
      for (const runId of record.runIds) if ((await store.queryRunItems(runId, 1)).length > 0) present.push(runId);
      problems.push(...pruning.pruneRecordProblems(record, present));
    }
    return problems;
  };

  return { prune, planPrune, prunes, verifyPrunes };
}
