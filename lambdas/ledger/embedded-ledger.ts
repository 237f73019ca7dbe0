import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AppendLog, LogReader, type Span } from './append-log.js';
import { COLD_DIR, ColdStore, type ColdGroup, type ColdItem } from './cold-store.js';
import { INDEX_FILE, keyOfLine, lineHash, refreshIndex, type IndexedPartition, type LedgerIndex, type RefreshOptions } from './ledger-index.js';
import { LockFile } from './lock-file.js';
import { blobKey, effectKey, FINISHED_STATUSES, isPendingApproval, pruneKey, pruneRecordProblems, pruneVerdict, PRUNED_PK, runPartitions, writeKeyOf, type Key, type PruneRecord, type Stored } from './protocol.js';
import { chained, line, LogHead, parseEntry, splitChained, verifySeal, type Hidden, type Item, type LogEntry } from './sealed-log.js';
import { hmacSealer, ephemeralSealer, readOrCreateKeyFile, recordOf, type LedgerSealer } from './seal.js';
import { StorageLedger, type ItemWrite } from './storage-ledger.js';
import type { DamagedRunOptions } from './ledger.js';
import { LedgerIntegrityError } from '../shared/errors.js';
import { runKey, tokenKey, type ApprovalRecord, type RunRecord } from '../records/ledger-records.js';

export interface EmbeddedLedgerOptions {
  /** Directory the ledger persists to (created if needed; one process at a time). @default in memory */
  readonly dir?: string;
  /** fdatasync after every write, to survive an OS crash too (see `AppendLogOptions.fsync`). @default false */
  readonly fsync?: boolean;
  /**
   * Compact on open when the log holds more than `ratio` times the bytes of the live state, and at
   * least `minBytes`. @default { ratio: 4, minBytes: 1 MiB }
   */
  readonly compaction?: { readonly ratio: number; readonly minBytes: number };
  /** Notes on what opening did (a torn line dropped, a stale lock taken over, a compaction). @default console.warn */
  readonly onNote?: (note: string) => void;
  /**
   * Seals every item and the log's chain (lambdas/ledger/seal.ts). @default in memory: a random
   * key; on disk: the key file `keys/ledger-seal.key` in `dir` (made on first use)
   */
  readonly sealer?: LedgerSealer;
  /**
   * Finished runs (succeeded, stopped, killed) whose records stay in memory, the most recently
   * used; the others' records are read back from the log when asked for. Opened to write, nothing
   * of the others stays in memory (they are noted in `ledger.cold/`, and the newest of them listed:
   * `listedFinishedRuns`); opened to read, where their lines are. What keeps an engine that runs
   * for months flat in the runs it finished. On disk only: in memory, the Map is the store. At
   * least 1. @default 16
   */
  readonly retainFinishedRuns?: number;
  /**
   * Business-key effects (EFFECT#…, one per effect a tool keyed by its arguments made) whose
   * records stay in memory, the most recently used; the others are read back from the log when a
   * claim asks for them (lambdas/ledger/cold-store.ts). On disk, opened to write only. At least 1.
   * @default 64
   */
  readonly retainEffects?: number;
  /**
   * How many of the finished runs let go of from memory keep their place in a list of the newest
   * (by creation time), so that listing the newest runs (the watchdog's sweep, `savepoint runs`)
   * reads their run records without going through `ledger.cold/`. A fixed number, not one per
   * run. On disk, opened to write only. At least 1. @default 100
   */
  readonly listedFinishedRuns?: number;
}

export type { PruneRecord } from './protocol.js';

/** The seal key's file in a state directory (`keys/`, like the approval keys). */
export const SEAL_KEY_FILE = 'keys/ledger-seal.key';


const RUN_SK = runKey('').sk;
/** The partitions that belong to one run: its records, its task tokens, its blobs (records.ts, protocol.ts). */
const RUN_SCOPED = /^(RUN|TOKEN|BLOB)#/;

/**
 * The ledger in this process, a storage engine beneath the protocol (storage-ledger.ts): the same
 * items and keys as the DynamoDB ledger, kept in a Map per partition, optionally persisted to an
 * append-only log (sealed-log.ts).
 *
 * A conditional put is one synchronous section, with no `await` between checking that the item
 * is still the one read and replacing it:
 *
 *   check the item is still the one read ─► append the new item to the log (disk) ─► replace it in the Map
 *
 * Node runs one synchronous section at a time, so in one process each put is atomic like a
 * single-item conditional write: of 50 concurrent claims, the first wins and the other 49 find
 * its record. The log is appended before the Map changes, so what a caller saw acknowledged is on
 * disk, and a write that failed to reach the disk changed nothing.
 *
 * Records are opaque: stored as given (as JSON), read back as copies.
 */
export class EmbeddedLedger extends StorageLedger {
  private readonly partitions = new Map<string, Partition>();
  /** approvalId → item key (the byApprovalId GSI). */
  private readonly approvalsById = new Map<string, Key>();
  /** The pending approvals (the pendingApprovals GSI), by `pk|sk`. */
  private readonly pending = new Map<string, Key>();
  private closed = false;
  /** Finished runs whose partitions are in memory, least recently used first (`retainFinishedRuns`). */
  private readonly finishedInMemory = new Map<string, true>();
  private retainFinishedRuns = 16;
  /** Business-key effect partitions in memory, least recently used first (`retainEffects`). */
  private readonly effectsInMemory = new Map<string, true>();
  private retainEffects = 64;
  /**
   * Opened to write on disk: where the partitions let go of from memory are noted (cold-store.ts),
   * and the newest of the finished runs there (`listedFinishedRuns`), newest first, each with its
   * run record's line; `complete` while no run let go of has dropped off its end.
   */
  private cold?: ColdStore;
  private listed: { runs: ListedRun[]; limit: number; complete: boolean } = { runs: [], limit: 100, complete: true };
  /** Set when opened to read (`openToRead`): the ledger reads, and refuses writes. */
  private readOnly = false;
  /** Opened to read: where the log's lines are read from (there is no AppendLog). */
  private reader?: LogReader;
  private onNote: (note: string) => void = () => undefined;

  /** The chain of the last line of the log (`''` for an empty log). */
  private tip = '';

  private constructor(
    private readonly sealer: LedgerSealer,
    private readonly log?: AppendLog<LogEntry>,
    private readonly lock?: LockFile,
    private readonly head?: LogHead,
  ) {
    super();
  }

  /**
   * Opens the ledger in memory, or on disk in `options.dir`. On disk, every line of the log is
   * streamed once, its chain checked (and the whole against the head: a damaged log is refused,
   * naming the line, before anything is read from it), and the sealed index (ledger-index.ts) is
   * brought up to date; the records themselves are read from the index, not parsed from every
   * line: the records of the runs still going (and the other live partitions) are read into
   * memory, each line checked against the index's hash and its seal, and the finished runs and the
   * business-key effects are noted in the cold store (cold-store.ts), read back when asked for. So
   * what an open keeps does not grow with the runs the log holds; it may compact the log.
   */
  static open(options: EmbeddedLedgerOptions = {}): EmbeddedLedger {
    if (options.dir === undefined) return new EmbeddedLedger(options.sealer ?? ephemeralSealer());
    const dir = options.dir;
    const onNote = options.onNote ?? ((note: string) => console.warn(`savepoint ledger: ${note}`));
    mkdirSync(dir, { recursive: true });
    const lock = LockFile.acquire(join(dir, 'ledger.lock'), onNote);
    let log: AppendLog<LogEntry> | undefined;
    let head: LogHead | undefined;
    try {
      const logPath = join(dir, 'ledger.jsonl');
      const keyPath = join(dir, SEAL_KEY_FILE);
      // A ledger that was kept here and is gone must not start over as if nothing happened: its
      // head, or the seal key made with it, is the evidence that it existed.
      const keyExisted = existsSync(keyPath);
      const sealer = options.sealer ?? hmacSealer(readOrCreateKeyFile(keyPath));
      head = LogHead.open(join(dir, 'ledger.head'));
      refuseMissingLog(logPath, head, keyExisted && options.sealer === undefined, dir);
      // Refused before the file is touched: a damaged log is left exactly as it was found.
      const index = refreshIndex(logPath, join(dir, INDEX_FILE), sealer, head, { verify: 'chain' });
      log = AppendLog.openToAppend<LogEntry>(logPath, index.log, { fsync: options.fsync, onNote });
      const ledger = new EmbeddedLedger(sealer, log, lock, head);
      ledger.onNote = onNote;
      // At least the run just asked for stays: the caller reads the partition it was handed.
      if (options.retainFinishedRuns !== undefined) ledger.retainFinishedRuns = Math.max(1, options.retainFinishedRuns);
      if (options.retainEffects !== undefined) ledger.retainEffects = Math.max(1, options.retainEffects);
      if (options.listedFinishedRuns !== undefined) ledger.listed.limit = Math.max(1, options.listedFinishedRuns);
      // The index is current now: whatever an earlier process noted of what it let go of is made anew from it.
      ledger.cold = ColdStore.create(join(dir, COLD_DIR), sealer);
      ledger.take(index);
      ledger.compactIfLarge(index.liveBytes(), options.compaction ?? { ratio: 4, minBytes: 1 << 20 }, onNote);
      ledger.evictFinished();
      return ledger;
    } catch (error) {
      log?.close();
      head?.close();
      lock.release();
      throw error;
    }
  }

  /**
   * Opens the ledger in `options.dir` to read: what `savepoint status`, `runs`, `approvals`,
   * `verify` and the console need, in time and memory that do not grow with the runs the log
   * holds. It reads the sealed index beside the log (ledger-index.ts) and the lines written after
   * it (each chain-checked, and the whole against the head), and no other line until a record is
   * asked for: then the partition's lines are read, each checked against the index's hash of it
   * and its seal. With `verify`, every line of the log is streamed first, its chain and seal
   * checked, keeping nothing (`savepoint verify`). Writes are refused: the ledger is
   * read-only, and the lock is held until `close` so that no engine rewrites the log meanwhile.
   */
  static openToRead(options: Omit<EmbeddedLedgerOptions, 'compaction' | 'fsync'> & { dir: string } & RefreshOptions): EmbeddedLedger {
    const { dir } = options;
    const onNote = options.onNote ?? ((note: string) => console.warn(`savepoint ledger: ${note}`));
    const lock = LockFile.acquire(join(dir, 'ledger.lock'), onNote);
    let head: LogHead | undefined;
    let reader: LogReader | undefined;
    try {
      const logPath = join(dir, 'ledger.jsonl');
      const keyPath = join(dir, SEAL_KEY_FILE);
      const keyExisted = existsSync(keyPath);
      const sealer = options.sealer ?? hmacSealer(readOrCreateKeyFile(keyPath));
      head = LogHead.open(join(dir, 'ledger.head'));
      refuseMissingLog(logPath, head, keyExisted && options.sealer === undefined, dir);
      const index = refreshIndex(logPath, join(dir, INDEX_FILE), sealer, head, options);
      const ledger = new EmbeddedLedger(sealer, undefined, lock, head);
      ledger.readOnly = true;
      // A reader goes through runs one at a time (verify --all), or reads one: one finished run in memory is enough.
      ledger.retainFinishedRuns = Math.max(1, options.retainFinishedRuns ?? 1);
      if (existsSync(logPath)) ledger.reader = reader = new LogReader(logPath);
      ledger.restore(index);
      return ledger;
    } catch (error) {
      reader?.close();
      head?.close();
      lock.release();
      throw error;
    }
  }

  /**
   * Takes the partitions, the approval indexes and the chain's tip from an index: every partition
   * on disk only, its lines read when it is asked for, and where they are taken from the index then.
   */
  private restore(index: LedgerIndex): void {
    for (const pk of index.partitionKeys()) {
      // Its lines are checked against the index's record of them (parsed from the index when read, not kept).
      const partition = new Partition((spans) => this.readIndexed(spans, index.partition(pk)));
      const run = index.runs.get(pk);
      partition.restore(() => {
        const { items } = index.partition(pk)!;
        return { lines: [...items.values()], run: items.get(RUN_SK) };
      }, run?.status, run?.createdAt);
      this.partitions.set(pk, partition);
    }
    for (const [id, key] of index.pending) this.pending.set(id, key);
    for (const [id, key] of index.approvals) this.approvalsById.set(id, key);
    this.tip = index.log.tip;
  }

  /**
   * Takes the live state from a current index (opened to write): the finished runs' partitions
   * (but a run's with a pending approval) and the effects' go to the cold store, the newest of those
   * runs to the list of them; every other partition is read into memory. Brings the head up to date.
   */
  private take(index: LedgerIndex): void {
    const pendingGroups = new Set([...index.pending.values()].map((key) => groupOfPartition(key.pk)));
    const coldGroups = new Map<string, ColdItem[]>();
    for (const pk of index.partitionKeys()) {
      const group = groupOfPartition(pk);
      const status = group.startsWith('RUN#') ? index.runs.get(group)?.status : undefined;
      const done = pk.startsWith(EFFECT_PREFIX) || (status !== undefined && FINISHED_STATUSES.has(status as RunRecord['status']));
      const indexed = index.partition(pk)!;
      if (done && !pendingGroups.has(group)) {
        if (!coldGroups.has(group)) coldGroups.set(group, []);
        for (const { sk, offset, bytes, hash } of indexed.items.values()) coldGroups.get(group)!.push({ pk, sk, offset, bytes, seal: '', hash });
        continue;
      }
      const spans = [...indexed.items.values()].map(({ offset, bytes }) => ({ offset, bytes }));
      this.partitions.set(pk, Partition.filled((lines) => this.readLines(lines), this.readIndexed(spans, indexed), false));
      this.touch(pk);
    }
    const approvalsOf = new Map<string, string[]>();
    for (const [id, key] of index.approvals) {
      const group = groupOfPartition(key.pk);
      if (!coldGroups.has(group)) this.approvalsById.set(id, key);
      else approvalsOf.set(group, [...(approvalsOf.get(group) ?? []), id]);
    }
    for (const [id, key] of index.pending) this.pending.set(id, key);
    const listed: ListedRun[] = [];
    const groups: ColdGroup[] = [];
    for (const [group, items] of coldGroups) {
      const run = index.runs.get(group);
      groups.push({ group, items, approvals: approvalsOf.get(group) ?? [], ...(run && { run }) });
      const item = items.find((cold) => cold.pk === group && cold.sk === RUN_SK);
      if (run && item) listed.push({ pk: group, createdAt: run.createdAt, item });
    }
    this.cold!.putAll(groups);
    this.listNewest(listed);
    const { lines, tip } = index.log;
    this.tip = tip;
    if (this.head!.needsWrite(lines, tip, this.sealer)) this.head!.write(lines, tip, this.sealer);
  }

  /** Closes the log and releases the directory; the ledger cannot be used afterwards. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    // The lines this ledger wrote go into the index while the lock is still held: the next reader
    // finds it current. A failure here loses no record (the log is whole); the next reader names it.
    if (this.log) {
      try {
        refreshIndex(this.log.path, join(dirname(this.log.path), INDEX_FILE), this.sealer, this.head!);
      } catch (error) {
        this.onNote(`${INDEX_FILE} not brought up to date on close (${error instanceof Error ? error.message : String(error)})`);
      }
    }
    this.log?.close();
    this.reader?.close();
    this.head?.close();
    this.lock?.release();
  }

  // ── the primitives ──────────────────────────────────────────────────────────────────────

  protected read(keys: readonly Key[]): (Stored | undefined)[] {
    return keys.map((key) => stored(this.get(key)));
  }

  protected readForUpdate(key: Key): Stored | undefined {
    return stored(this.get(key));
  }

  protected put(key: Key, item: Stored, expected: Stored | undefined | 'any'): boolean {
    if (expected !== 'any' && !sameItem(this.get(key), expected?.basis as Item | undefined)) return false;
    this.storeItem(key, item);
    return true;
  }

  // Every condition checked, then every item stored, in one synchronous section: no other write
  // lands in between. On disk each item is its own line, in the order given (a call before its
  // effect when claiming, an effect before its call when completing, as the separate writes were):
  // a crash between the two lines leaves the first alone, a state the rules of protocol.ts take up
  // on the retry.
  protected putItems(writes: readonly ItemWrite[]): boolean {
    if (!writes.every(({ key, expected }) => sameItem(this.get(key), expected?.basis as Item | undefined))) return false;
    for (const { key, item } of writes) if (item) this.storeItem(key, item);
    return true;
  }

  private storeItem(key: Key, item: Stored): void {
    const { countedSteps, guardReasons } = item.meta;
    this.store(key, item.record, {
      ...(countedSteps && { countedSteps }),
      ...(guardReasons && { guardReasons }),
      ...(isPendingApproval(item.record) && { pendingApproval: true }),
    });
  }

  protected queryRun(runId: string, fromSk?: string): Stored[] {
    const items = this.partition(runKey(runId).pk)?.sorted() ?? [];
    // Sort-key order, as a DynamoDB query returns the partition: TURN#0001, TURN#0001#CALL#01, …
    return items.filter(([sk]) => fromSk === undefined || sk >= fromSk).map(([, item]) => ({ record: copy(item) as Record<string, unknown>, meta: {} }));
  }

  // The newest `limit` runs by the creation time each run partition keeps (the order listRuns
  // sorts in): only their run records are read. The runs let go of
  // from memory come from the list of the newest of them when it reaches far enough (every run it
  // leaves out is older than all it holds), else from the whole cold store. A record read back
  // from disk that fails its checks is named to `onDamaged` (or thrown without it).
  protected async scanRuns(limit: number, options: DamagedRunOptions): Promise<RunRecord[]> {
    const held = [...this.partitions].filter(([pk, partition]) => pk.startsWith('RUN#') && partition.createdAt !== undefined).map(heldRun);
    const cold = this.cold && (this.listed.complete || limit <= this.listed.runs.length ? this.listed.runs : this.listAllCold());
    for (const run of cold ?? []) if (!this.partitions.has(run.pk)) held.push([run.pk, { createdAt: run.createdAt, read: () => this.readColdItems([run.item])[0]![1] }]);
    // Runs created at the same instant in key order: the same whichever of them are in memory.
    const newest = held.sort(([pkA, a], [pkB, b]) => b.createdAt.localeCompare(a.createdAt) || (pkA < pkB ? -1 : pkA > pkB ? 1 : 0)).slice(0, limit);
    return runRecords(newest, options);
  }

  protected async queryRunning(options: DamagedRunOptions): Promise<RunRecord[]> {
    // By the status each run partition keeps: the finished runs' records stay on disk.
    return runRecords([...this.partitions].filter(([, partition]) => partition.status === 'running').map(heldRun), options);
  }

  protected approvalById(approvalId: string): Key | undefined {
    const held = this.approvalsById.get(approvalId);
    if (held || !this.cold) return held;
    // Let go of with its run: reading the run back puts its approvals in the index again.
    const group = this.cold.groupOfApproval(approvalId);
    if (group !== undefined) this.partition(group);
    return this.approvalsById.get(approvalId);
  }

  protected async queryPendingApprovals(): Promise<ApprovalRecord[]> {
    // Sorted like the index: by decideBy (then by key, so that ties come out the same every time).
    return [...this.pending]
      .map(([id, key]) => ({ id, item: this.get(key) as Item<ApprovalRecord> }))
      .sort((a, b) => a.item.record.decideBy.localeCompare(b.item.record.decideBy) || a.id.localeCompare(b.id))
      .map(({ item }) => copy(item));
  }

  protected putTaskToken(key: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>, taskToken: string): void {
    this.store(tokenKey(key), { taskToken });
  }

  protected async readTaskToken(key: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>): Promise<string | undefined> {
    return (this.get(tokenKey(key))?.record as { taskToken?: string } | undefined)?.taskToken;
  }

  // Large values by reference (ledger/blobs.ts), under the DynamoDB ledger's keys.
  protected async writeBlob(runId: string, digest: string, chunks: readonly string[]): Promise<void> {
    chunks.forEach((data, index) => this.store(blobKey(runId, digest, index), { kind: 'blob', data }));
  }

  protected async readBlob(runId: string, digest: string): Promise<string[]> {
    const prefix = `${digest}#`;
    return (this.partition(blobKey(runId, digest, 0).pk)?.sorted() ?? [])
      .filter(([sk]) => sk.startsWith(prefix))
      .map(([, item]) => String((item.record as { data?: unknown }).data));
  }

  // ── retention ──────────────────────────────────────────────────────────────────────────

  /**
   * Removes the records of every run that finished (succeeded, stopped or killed) before
   * `finishedBefore` and that `pruneVerdict` lets go (protocol.ts: no pending approval, no live
   * fork reading it): its run, turns, calls and approvals, its task tokens and blobs. The log is
   * rewritten without them (as a compaction rewrites it, crash-safe), then a sealed PruneRecord
   * naming them is appended. Business-key effects (EFFECT#…) are kept: they are what keeps a
   * refund paid by a pruned run from being paid again. Returns the record, or undefined when no
   * run qualified (nothing is written then).
   */
  prune(finishedBefore: Date, now: Date): PruneRecord | undefined {
    if (this.readOnly) throw new Error('the ledger was opened to read (EmbeddedLedger.openToRead): it takes no write');
    const cutoff = finishedBefore.toISOString();
    // A prune goes through every finished run, and rewrites the log: what was let go of is read back first.
    this.warmAll();
    const runIds: string[] = [];
    const pendingOf = (runId: string) => [...this.pending.values()].filter((key) => key.pk === runKey(runId).pk).length;
    const forkStatus = (runId: string) => this.partitions.get(runKey(runId).pk)?.status as RunRecord['status'] | undefined;
    for (const partition of this.partitions.values()) {
      const run = partition.status !== undefined && FINISHED_STATUSES.has(partition.status as RunRecord['status']) ? (partition.runItem()?.record as RunRecord | undefined) : undefined;
      if (run && pruneVerdict(run, finishedBefore, { pendingApprovals: pendingOf(run.runId), forkStatus }).prune) runIds.push(run.runId);
    }
    if (runIds.length === 0) {
      this.evictFinished();
      return undefined;
    }
    runIds.sort();
    const digest = createHash('sha256');
    let records = 0;
    const writes = new Set<string>();
    for (const runId of runIds) {
      for (const pk of runPartitions(runId)) {
        const partition = this.partitions.get(pk);
        if (!partition) continue;
        for (const [sk, stored] of partition.sorted()) {
          digest.update(line({ pk, sk }, stored)).update('\n');
          records++;
          const write = writeKeyOf(stored.record as Record<string, unknown>);
          if (write !== undefined) writes.add(write);
          const { approvalId } = stored.record as { approvalId?: unknown };
          if (typeof approvalId === 'string') this.approvalsById.delete(approvalId);
          this.pending.delete(`${pk}|${sk}`);
        }
        this.partitions.delete(pk);
      }
    }
    for (const runId of runIds) this.finishedInMemory.delete(runId);
    const summary: PruneRecord = {
      kind: 'prune',
      prunedAt: now.toISOString(),
      finishedBefore: cutoff,
      runIds,
      records,
      digest: `sha256:${digest.digest('hex')}`,
      ...(writes.size > 0 && { writes: [...writes].sort() }),
    };
    if (this.log) this.rewriteLive();
    this.store(pruneKey(summary.prunedAt, this.partitions.get(PRUNED_PK)?.items.size ?? 0), summary);
    return summary;
  }

  /** The prune records, oldest first. */
  prunes(): PruneRecord[] {
    return (this.partition(PRUNED_PK)?.sorted() ?? []).map(([, stored]) => copy(stored) as PruneRecord);
  }

  /**
   * Problems with the prune records (none: `[]`): each is sealed (checked when the log was read),
   * and must agree with itself and with the ledger — none of its runs is here any more. A run
   * that came back under a pruned id, or a record whose counts do not add up, is reported.
   */
  verifyPrunes(): string[] {
    return this.prunes().flatMap((prune) => pruneRecordProblems(prune, prune.runIds.filter((runId) => this.partition(runKey(runId).pk) !== undefined)));
  }

  // ── the store ───────────────────────────────────────────────────────────────────────────

  private partition(pk: string): Partition | undefined {
    if (this.closed) throw new Error('the ledger is closed');
    const partition = this.partitions.get(pk) ?? this.warm(pk);
    // A finished run's or an effect's partition, asked for: the most recently used now (and read back, if it was evicted).
    if (partition && this.touch(pk)) this.evictFinished();
    return partition;
  }

  /** Makes `pk`'s group the most recently used of the finished runs or effects in memory; whether it is one of them. */
  private touch(pk: string): boolean {
    const runId = runOfPartition(pk);
    const lru = runId !== undefined ? (this.finished(runId) ? this.finishedInMemory : undefined) : this.cold && pk.startsWith(EFFECT_PREFIX) ? this.effectsInMemory : undefined;
    if (!lru) return false;
    const key = runId ?? pk;
    lru.delete(key);
    lru.set(key, true);
    return true;
  }

  private get(key: Key): Item | undefined {
    return this.partition(key.pk)?.items.get(key.sk);
  }

  /** Commits one write (log first, then memory). */
  private store(key: Key, record: unknown, hidden: Hidden = {}): void {
    if (this.closed) throw new Error('the ledger is closed');
    if (this.readOnly) throw new Error('the ledger was opened to read (EmbeddedLedger.openToRead): it takes no write');
    // One serialization: the stored record is parsed from the text the log line carries.
    const text = JSON.stringify(record);
    const json = JSON.parse(text) as unknown;
    // The seal protects a record at rest: in memory there is no rest (nothing outside this process
    // holds the item, and it dies with it), so only a ledger with a log seals what it writes.
    const item: Item = { record: json, json: text, hidden, seal: this.log ? this.sealer.seal(key, { ...(json as object), ...hidden }) : '' };
    let span: Span | undefined;
    if (this.log) {
      const body = line(key, item);
      const chain = this.sealer.chain(this.tip, body);
      span = this.log.append(chained(body, chain));
      this.tip = chain;
      this.head!.write(this.log.lines, chain, this.sealer);
    }
    this.set(key, item, span);
    this.evictFinished();
  }

  /** Puts an item in memory (its line at `span` in the log), and keeps the approval indexes and the finished runs in step with it. */
  private set(key: Key, item: Item, span?: Span): void {
    // A partition let go of is read back before it takes the write: the write adds to it, it does not replace it.
    let partition = this.partitions.get(key.pk) ?? this.warm(key.pk);
    if (!partition) this.partitions.set(key.pk, (partition = new Partition((spans) => this.readLines(spans))));
    partition.put(key.sk, item, span);
    const runId = runOfPartition(key.pk);
    if (runId !== undefined) this.finishedInMemory.delete(runId);
    this.touch(key.pk);
    const { approvalId } = item.record as { approvalId?: unknown };
    if (typeof approvalId === 'string') this.approvalsById.set(approvalId, key);
    if (item.hidden.pendingApproval) this.pending.set(`${key.pk}|${key.sk}`, key);
    else this.pending.delete(`${key.pk}|${key.sk}`);
  }

  private finished(runId: string): boolean {
    const status = this.partitions.get(runKey(runId).pk)?.status;
    return status !== undefined && FINISHED_STATUSES.has(status as RunRecord['status']);
  }

  /**
   * Drops from memory the records of the finished runs past `retainFinishedRuns` and of the effects
   * past `retainEffects` (least recently used first). Opened to write, they are let go of entirely
   * (`letGo`: noted in the cold store); opened to read, their partitions keep where their lines are.
   */
  private evictFinished(): void {
    if (!this.log && !this.reader) return;
    for (const runId of this.finishedInMemory.keys()) {
      if (this.finishedInMemory.size <= this.retainFinishedRuns) break;
      this.finishedInMemory.delete(runId);
      if (this.cold) this.letGo(runKey(runId).pk, runPartitions(runId));
      else for (const pk of runPartitions(runId)) this.partitions.get(pk)?.evict();
    }
    for (const pk of this.effectsInMemory.keys()) {
      if (this.effectsInMemory.size <= this.retainEffects) break;
      this.effectsInMemory.delete(pk);
      this.letGo(pk, [pk]);
    }
  }

  /**
   * Lets go of a group of partitions (a finished run's, or an effect's): noted in the cold store
   * (unless what it holds of them is still current), then dropped from memory with their approval
   * ids. A group with an item whose line is not on disk, or with a pending approval, stays.
   */
  private letGo(group: string, pks: readonly string[]): void {
    const held = pks.flatMap((pk) => (this.partitions.has(pk) ? [[pk, this.partitions.get(pk)!] as const] : []));
    if (held.length === 0 || held.some(([pk]) => [...this.pending.values()].some((key) => key.pk === pk))) return;
    const items: ColdItem[] = [];
    const approvals: string[] = [];
    for (const [pk, partition] of held) {
      for (const [sk, item, span] of partition.entries()) {
        if (!span) return;
        items.push({ pk, sk, offset: span.offset, bytes: span.bytes, seal: item.seal });
        const { approvalId } = item.record as { approvalId?: unknown };
        if (typeof approvalId === 'string') approvals.push(approvalId);
      }
    }
    const run = group.startsWith('RUN#') ? this.partitions.get(group) : undefined;
    const status = run?.status;
    const createdAt = run?.createdAt;
    if (held.some(([, partition]) => !partition.noted)) this.cold!.put({ group, items, approvals, ...(status !== undefined && createdAt !== undefined && { run: { status, createdAt } }) });
    for (const [pk] of held) this.partitions.delete(pk);
    for (const id of approvals) this.approvalsById.delete(id);
    const runItem = items.find((item) => item.pk === group && item.sk === RUN_SK);
    if (runItem && createdAt !== undefined) this.list({ pk: group, createdAt, item: runItem });
  }

  /** Puts a run let go of in the list of the newest of them (replacing its older place), keeping the list at its limit. */
  private list(run: ListedRun): void {
    const runs = this.listed.runs.filter((listed) => listed.pk !== run.pk);
    let at = runs.findIndex((listed) => listed.createdAt < run.createdAt);
    if (at < 0) at = runs.length;
    runs.splice(at, 0, run);
    if (runs.length > this.listed.limit) {
      runs.length = this.listed.limit;
      this.listed.complete = false;
    }
    this.listed.runs = runs;
  }

  /** Every run let go of, from the whole cold store; the list of the newest made anew from them. */
  private listAllCold(): ListedRun[] {
    const runs: ListedRun[] = [];
    for (const group of this.cold!.groups()) {
      const item = group.items.find((item) => item.pk === group.group && item.sk === RUN_SK);
      if (group.run && item) runs.push({ pk: group.group, createdAt: group.run.createdAt, item });
    }
    this.listNewest(runs);
    return runs;
  }

  /** The list of the newest runs let go of made anew from `runs` (every one of them), newest first. */
  private listNewest(runs: ListedRun[]): void {
    runs.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    this.listed = { runs: runs.slice(0, this.listed.limit), limit: this.listed.limit, complete: runs.length <= this.listed.limit };
  }

  /**
   * The partitions of `pk`'s group, read back from the log into memory if the group was let go of
   * (every line's seal checked, and checked to be the line the cold store noted); undefined when
   * `pk` has no partition. Its approvals are in the approval index again.
   */
  private warm(pk: string): Partition | undefined {
    const runId = runOfPartition(pk);
    // Only a run's partitions and an effect's are ever let go of: no other key is looked for there.
    if (!this.cold || (runId === undefined && !pk.startsWith(EFFECT_PREFIX))) return undefined;
    const group = groupOfPartition(pk);
    // A run's partitions are let go of and read back together: its run partition in memory means the group is.
    if (runId !== undefined && this.partitions.has(group)) return undefined;
    const found = this.cold.get(group);
    if (!found) return undefined;
    const byPk = new Map<string, [string, Item, Span][]>();
    for (const [sk, item, span] of this.readColdItems(found.items)) {
      const of = found.items.find((cold) => cold.offset === span.offset)!.pk;
      if (!byPk.has(of)) byPk.set(of, []);
      byPk.get(of)!.push([sk, item, span]);
      const { approvalId } = item.record as { approvalId?: unknown };
      if (typeof approvalId === 'string') this.approvalsById.set(approvalId, { pk: of, sk });
    }
    for (const [of, entries] of byPk) this.partitions.set(of, Partition.filled((spans) => this.readLines(spans), entries, true));
    this.touch(group);
    return this.partitions.get(pk);
  }

  /**
   * Reads back every group the cold store holds (a prune, a compaction: they go through all), and
   * empties the store: all of it is in memory now, and what the caller removes must not come back
   * from there.
   */
  private warmAll(): void {
    if (!this.cold) return;
    // Not `partition`: that lets go of the least recently used again; all of them stay until the caller is done.
    for (const { group } of [...this.cold.groups()]) if (!this.partitions.has(group)) this.warm(group);
    this.startColdAgain();
  }

  /** An empty cold store, and so no run listed from it: what is let go of next is noted afresh. */
  private startColdAgain(): void {
    this.cold = ColdStore.create(this.cold!.dir, this.sealer);
    this.listed = { runs: [], limit: this.listed.limit, complete: true };
    for (const partition of this.partitions.values()) partition.noted = false;
  }

  /**
   * The items of an evicted partition, read back from its lines in the log, each line's seal
   * checked again; and first, when the lines were recorded elsewhere (the index, the cold store),
   * that each is the line recorded there: `recorded` gives the key recorded at a span, and whether
   * the line's text is the one recorded.
   */
  private readLines(spans: readonly Span[], recorded?: { where: string; at: (span: Span) => Key | undefined; is: (span: Span, text: string) => boolean }): [string, Item, Span][] {
    const source = (this.log ?? this.reader)!;
    return spans.map((span) => {
      const text = source.readLine(span);
      const key = recorded?.at(span);
      if (recorded && (!key || !recorded.is(span, text))) {
        throw new LedgerIntegrityError(
          { ...recordOf(key ?? { pk: '?', sk: '?' }), record: `${source.path} at byte ${span.offset} (${key?.pk}/${key?.sk})` },
          `the line is not the one ${recorded.where} recorded there (altered, moved or replaced since)`,
        );
      }
      const entry = parseEntry(JSON.parse(text), text);
      verifySeal(entry, this.sealer);
      return [entry.sk, item(entry.record, entry.hidden ?? {}, entry.seal), span];
    });
  }

  /** The lines of an indexed partition: each must hash to what the index recorded at its place. */
  private readIndexed(spans: readonly Span[], index: IndexedPartition | undefined): [string, Item, Span][] {
    const byOffset = new Map([...(index?.items.values() ?? [])].map((item) => [item.offset, item]));
    return this.readLines(spans, {
      where: INDEX_FILE,
      at: (span) => byOffset.get(span.offset),
      is: (span, text) => byOffset.get(span.offset)!.bytes === span.bytes && lineHash(text) === byOffset.get(span.offset)!.hash,
    });
  }

  /** The lines the cold store noted: each must carry the key and the seal noted at its place. */
  private readColdItems(items: readonly ColdItem[]): [string, Item, Span][] {
    const byOffset = new Map(items.map((item) => [item.offset, item]));
    return this.readLines(items, {
      where: COLD_DIR,
      at: (span) => byOffset.get(span.offset),
      is: (span, text) => {
        const noted = byOffset.get(span.offset)!;
        const key = keyOfLine(text);
        if (noted.bytes !== span.bytes || key?.pk !== noted.pk || key.sk !== noted.sk) return false;
        return noted.hash !== undefined ? lineHash(text) === noted.hash : splitChained(text)?.body.endsWith(`,"seal":${JSON.stringify(noted.seal)}}`) === true;
      },
    });
  }

  /** Compacts when the log holds more than `ratio` times the `liveBytes` of its live state (and at least `minBytes`). */
  private compactIfLarge(liveBytes: number, threshold: { ratio: number; minBytes: number }, onNote: (note: string) => void): void {
    if (!this.log || this.log.bytes < threshold.minBytes || this.log.bytes <= threshold.ratio * liveBytes) return;
    const before = this.log.bytes;
    this.rewriteLive();
    onNote(`${this.log.path}: compacted ${before} bytes of log to ${this.log.bytes} bytes of live state`);
  }

  /** The live state as log lines, chained from the start. */
  private liveLines(): { lines: string[]; bytes: number; tip: string; keys: Key[] } {
    const lines: string[] = [];
    const keys: Key[] = [];
    let bytes = 0;
    let tip = '';
    for (const [pk, partition] of this.partitions) {
      for (const [sk, stored] of partition.items) {
        keys.push({ pk, sk });
        const body = line({ pk, sk }, stored);
        tip = this.sealer.chain(tip, body);
        const text = chained(body, tip);
        lines.push(text);
        bytes += Buffer.byteLength(text) + 1;
      }
    }
    return { lines, bytes, tip, keys };
  }

  /** Replaces the log by the live state (compaction, prune): what was let go of is read back first, or it would be lost. */
  private rewriteLive(): void {
    this.warmAll();
    const { lines, tip, keys } = this.liveLines();
    // The head names both logs while the new one replaces the old: a crash in between leaves a
    // head that matches whichever of the two is on disk.
    const head = this.head!;
    head.write(lines.length, tip, this.sealer, { lines: head.lines, chain: this.tip });
    const spans = this.log!.rewrite(lines);
    this.tip = tip;
    head.write(lines.length, tip, this.sealer);
    // Each item is one line now: where the partitions find their lines is where the rewrite put them.
    keys.forEach((key, index) => this.partitions.get(key.pk)!.relocated(key.sk, spans[index]!));
    this.evictFinished();
  }
}

/** A run to list: its creation time, and how to read its run record. */
interface Listed {
  readonly createdAt: string;
  readonly read: () => Item | undefined;
}

/** A run partition in memory, to list. */
const heldRun = ([pk, partition]: [string, Partition]): [string, Listed] => [pk, { createdAt: partition.createdAt!, read: () => partition.runItem() }];

/** A finished run let go of from memory, in the list of the newest of them: its run record's line. */
interface ListedRun {
  readonly pk: string;
  readonly createdAt: string;
  readonly item: ColdItem;
}

/** The partitions of business-key effects (protocol.ts `effectKey`). */
const EFFECT_PREFIX = effectKey('').pk;

/** The run records of the runs to list; one that fails its checks named to `onDamaged`, or thrown without it. */
function runRecords(listed: [string, Listed][], { onDamaged }: DamagedRunOptions): RunRecord[] {
  const runs: RunRecord[] = [];
  for (const [pk, partition] of listed) {
    try {
      const run = partition.read() as Item<RunRecord> | undefined;
      if (run) runs.push(copy(run));
    } catch (error) {
      if (!onDamaged || !(error instanceof LedgerIntegrityError)) throw error;
      onDamaged(pk.slice('RUN#'.length), error);
    }
  }
  return runs;
}

/** A stored item as the protocol reads it: a copy of its record and hidden attributes, and the item itself as the basis of a put. */
function stored(item: Item | undefined): Stored | undefined {
  if (!item) return undefined;
  const { countedSteps, guardReasons } = item.hidden;
  return {
    record: copy(item) as Record<string, unknown>,
    meta: { ...(countedSteps && { countedSteps: [...countedSteps] }), ...(guardReasons && { guardReasons: [...guardReasons] }) },
    basis: item,
  };
}

/**
 * The items of one partition, and their sort-key order (computed when a query needs it). On disk,
 * also where each item's line is in the log. Opened to read, an evicted partition (a finished
 * run's) drops its items, keeps only where their lines are (packed: 16 bytes an item) and its run's
 * status, and reads them back when next asked for; opened to write, the ledger drops the whole
 * partition instead (cold-store.ts).
 */
class Partition {
  private held?: Map<string, Item> = new Map();
  private order?: [string, Item][];
  /** Where each held item's line is (on disk). */
  private where?: Map<string, Span> = new Map();
  /** Evicted: offset and length of each item's line, and which of them is the run record's. */
  private packed?: { spans: Float64Array; run?: Span };
  /** Restored from an index: where its lines are, asked of the index when first needed. */
  private unread?: () => { lines: readonly Span[]; run: Span | undefined };
  /** The status and creation time of the run record (RUN partitions): what listing the runs reads. */
  status?: string;
  createdAt?: string;
  /** What the cold store holds of this partition is current: it was read back from there, and has not changed since. */
  noted = false;

  constructor(private readonly read: (spans: readonly Span[]) => [string, Item, Span][]) {}

  /** A partition of the items read from `entries` and where their lines are; `noted`: as the cold store holds them. */
  static filled(read: (spans: readonly Span[]) => [string, Item, Span][], entries: readonly [string, Item, Span][], noted: boolean): Partition {
    const partition = new Partition(read);
    for (const [sk, stored, span] of entries) partition.put(sk, stored, span);
    partition.noted = noted;
    return partition;
  }

  /** Each item in memory, and where its line is (undefined: not on disk). */
  *entries(): Generator<[string, Item, Span | undefined]> {
    for (const [sk, stored] of this.items) yield [sk, stored, this.where?.get(sk)];
  }

  get items(): Map<string, Item> {
    if (this.held) return this.held;
    const { spans } = this.pack();
    const unpacked: Span[] = [];
    for (let i = 0; i < spans.length; i += 2) unpacked.push({ offset: spans[i]!, bytes: spans[i + 1]! });
    this.held = new Map();
    this.where = new Map();
    for (const [sk, stored, span] of this.read(unpacked)) {
      this.held.set(sk, stored);
      this.where.set(sk, span);
    }
    this.packed = undefined;
    return this.held;
  }

  /** The run record's item (RUN partitions), read back alone when the partition is evicted. */
  runItem(): Item | undefined {
    if (this.held || !this.pack().run) return this.held?.get(RUN_SK);
    return this.read([this.packed!.run!])[0]![1];
  }

  /** Where the lines of an evicted partition are (asked of the index, for one restored from it). */
  private pack(): { spans: Float64Array; run?: Span } {
    if (this.unread) {
      const { lines, run } = this.unread();
      this.unread = undefined;
      const spans = new Float64Array(lines.length * 2);
      lines.forEach((span, i) => {
        spans[2 * i] = span.offset;
        spans[2 * i + 1] = span.bytes;
      });
      this.packed = { spans, ...(run && { run: { offset: run.offset, bytes: run.bytes } }) };
    }
    return this.packed!;
  }

  put(sk: string, stored: Item, span?: Span): void {
    const items = this.items;
    this.noted = false;
    if (!items.has(sk)) this.order = undefined;
    else if (this.order) this.order.find((entry) => entry[0] === sk)![1] = stored;
    items.set(sk, stored);
    if (sk === RUN_SK) {
      this.status = String((stored.record as { status?: unknown }).status);
      this.createdAt = String((stored.record as { createdAt?: unknown }).createdAt);
    }
    if (span) this.where!.set(sk, span);
    else this.where!.delete(sk);
  }

  /** Drops the items from memory: only a partition whose every item has its line on disk can read them back. */
  evict(): void {
    if (!this.held || this.where!.size !== this.held.size || this.held.size === 0) return;
    const spans = new Float64Array(this.where!.size * 2);
    let i = 0;
    for (const span of this.where!.values()) {
      spans[i++] = span.offset;
      spans[i++] = span.bytes;
    }
    const run = this.where!.get(RUN_SK);
    this.packed = { spans, ...(run && { run }) };
    this.held = undefined;
    this.where = undefined;
    this.order = undefined;
  }

  /** Evicted from the start, as an index records it: where its lines are (`unread`, asked for when first needed), and its run's status and creation time. */
  restore(unread: () => { lines: readonly Span[]; run: Span | undefined }, status: string | undefined, createdAt: string | undefined): void {
    this.unread = unread;
    this.held = undefined;
    this.where = undefined;
    this.order = undefined;
    this.status = status;
    this.createdAt = createdAt;
  }

  /** The log was rewritten: the item under `sk` is now the line at `span`. */
  relocated(sk: string, span: Span): void {
    this.items;
    this.noted = false;
    this.where!.set(sk, span);
  }

  sorted(): [string, Item][] {
    // Plain code-unit order: for the ASCII keys of records.ts, the byte order DynamoDB sorts by.
    this.order ??= [...this.items.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map((sk) => [sk, this.items.get(sk)!]);
    return this.order;
  }
}

/** The group a partition is let go of with (cold-store.ts): its run's (`RUN#<runId>`), or its own. */
function groupOfPartition(pk: string): string {
  const runId = runOfPartition(pk);
  return runId !== undefined ? runKey(runId).pk : pk;
}

/** The run whose partition `pk` is (RUN_SCOPED), else undefined. */
function runOfPartition(pk: string): string | undefined {
  return RUN_SCOPED.test(pk) ? pk.slice(pk.indexOf('#') + 1) : undefined;
}

/** Whether a put's expected item is the current one: the same object, or (read back from the log) the same sealed content. */
function sameItem(current: Item | undefined, expected: Item | undefined): boolean {
  if (current === expected) return true;
  return current !== undefined && expected !== undefined && current.seal !== '' && current.seal === expected.seal && current.json === expected.json;
}

/**
 * A ledger that was kept here and is gone must not start over as if nothing happened: its head,
 * or the seal key made with it (`keyShowsLedger`), is the evidence that it existed.
 */
function refuseMissingLog(logPath: string, head: LogHead, keyShowsLedger: boolean, dir: string): void {
  if (existsSync(logPath) || !(head.lines > 0 || (keyShowsLedger && !head.existed))) return;
  throw new LedgerIntegrityError(
    { record: logPath },
    head.lines > 0
      ? `the file is missing, but ${head.path} records ${head.lines} lines of it (the ledger was deleted)`
      : `the file is missing, but the seal key ${join(dir, SEAL_KEY_FILE)} shows that a ledger was kept in ${dir} (the ledger was deleted)`,
  );
}

/** The partitions that hold one run's records (RUN_SCOPED). */
function item<T>(record: T, hidden: Hidden, seal: string): Item<T> {
  return { record, json: JSON.stringify(record), hidden, seal };
}

/** A fresh copy of a stored record (for listConversation's hundreds of records, ~5× faster than parsing its JSON). */
function copy<T>(stored: Item<T>): T {
  return cloneJson(stored.record) as T;
}

/** Deep-copies a value parsed from JSON: plain objects, arrays and primitives only. */
function cloneJson(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(cloneJson);
  const clone: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const field = cloneJson((value as Record<string, unknown>)[key]);
    // An own "__proto__" key (JSON allows it) must stay a key, not become the prototype.
    if (key === '__proto__') Object.defineProperty(clone, key, { value: field, enumerable: true, writable: true, configurable: true });
    else clone[key] = field;
  }
  return clone;
}
