import { dirname, join } from 'node:path';
import { existsSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { AppendLog, LogReader } from './append-log.js';
import { COLD_DIR, ColdStore } from './cold-store.js';
import { openLedgerDir, readColdItems } from './embedded-files.js';
import { copy, EFFECT_PREFIX, runOfPartition, sameItem, stored } from './embedded-memory.js';
import { heldRun, newestListed, runRecords, TieredStore, type Listed } from './embedded-tiers.js';
import { INDEX_FILE, refreshIndex, type RefreshOptions } from './ledger-index.js';
import type { DamagedRunOptions } from './ledger.js';
import { isPendingApproval, type Key, type Stored } from './protocol.js';
import { runPartitions, writeKeyOf, type ItemDelete, type RunItem } from './pruning.js';
import { line, type Hidden, type Item, type LogEntry } from './sealed-log.js';
import { ephemeralSealer, type LedgerSealer } from './seal.js';
import type { ItemWrite } from './storage-ledger.js';
import { handedKey, type EngineVersions } from './handed-versions.js';
import { runKey, tokenKey, type ApprovalRecord, type RunRecord } from '../records/ledger-records.js';
import { byCodeUnits } from '../shared/text.js';

export interface EmbeddedLedgerOptions {
  /** Directory the ledger persists to (created if needed; one process at a time). @default in memory */
  readonly dir?: string;
  /**
   * The savepoint command that opens it (`replay`), written in the directory's lock: a process the
   * lock keeps out names it (LockHeldError). @default none: the lock names the process only
   */
  readonly command?: string;
  /**
   * fdatasync the log and its head after every write, before it is acknowledged: a power loss or an
   * OS crash loses nothing acknowledged (see `AppendLogOptions.fsync` for the cost). @default false
   */
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
  /**
   * Reads hand out the stored records themselves, deeply frozen, instead of copies, and a write of
   * plain data keeps the record written itself, frozen where it is: for a ledger whose callers never
   * change a record once written or read (a replay's, local/replay/), where copying every record of
   * every read and write is most of what they cost. A reader or writer that tries to change a
   * record throws a TypeError (strict mode), and the store is left as it was. In memory only. @default false
   */
  readonly sharedReads?: boolean;
  /**
   * Marks the versions of the items it holds, so that a turn's write can hand its calls what it
   * wrote, sealed (handed-versions.ts `seenWith`), and a call handed it can write on those
   * versions. False for a ledger whose steps are never handed a state (a replay's: its loop hands
   * CallTool no decision, local/replay/loop.ts): a turn's write then makes no handed state and no
   * seal that nothing would read, and every call reads. @default true
   */
  readonly handsState?: boolean;
}

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
 * Records are opaque: stored as given (as JSON), read back as copies. Here, the primitives; the store
 * and its tiers are embedded-tiers.ts, the files embedded-files.ts, the in-memory form embedded-memory.ts.
 */
export class EmbeddedLedger extends TieredStore {
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
    if (options.dir === undefined) {
      const ledger = new EmbeddedLedger(options.sealer ?? ephemeralSealer());
      ledger.sharedReads = options.sharedReads === true;
      ledger.handsState = options.handsState !== false;
      return ledger;
    }
    const onNote = options.onNote ?? ((note: string) => console.warn(`savepoint ledger: ${note}`));
    // Refused before the file is touched: a damaged log is left exactly as it was found.
    const files = openLedgerDir(
      options.dir,
      { ...(options.sealer && { sealer: options.sealer }), ...(options.command !== undefined && { command: options.command }), onNote, create: true, fsync: options.fsync ?? false },
      { verify: 'chain' },
    );
    let log: AppendLog<LogEntry> | undefined;
    try {
      log = AppendLog.openToAppend<LogEntry>(files.logPath, files.index.log, { fsync: options.fsync, onNote });
      const ledger = new EmbeddedLedger(files.sealer, log, files.lock, files.head);
      ledger.onNote = onNote;
      ledger.handsState = options.handsState !== false;
      // At least the run just asked for stays: the caller reads the partition it was handed.
      if (options.retainFinishedRuns !== undefined) ledger.retainFinishedRuns = Math.max(1, options.retainFinishedRuns);
      if (options.retainEffects !== undefined) ledger.retainEffects = Math.max(1, options.retainEffects);
      if (options.listedFinishedRuns !== undefined) ledger.listed.limit = Math.max(1, options.listedFinishedRuns);
      // The index is current now: `take` builds the cold store from it (kept when an earlier open built it from the same log).
      ledger.cold = ColdStore.at(join(options.dir, COLD_DIR), files.sealer);
      ledger.take(files.index);
      ledger.compactIfLarge(files.index.liveBytes(), options.compaction ?? { ratio: 4, minBytes: 1 << 20 }, onNote);
      ledger.evictFinished();
      return ledger;
    } catch (error) {
      log?.close();
      files.release();
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
    const onNote = options.onNote ?? ((note: string) => console.warn(`savepoint ledger: ${note}`));
    const files = openLedgerDir(options.dir, { ...(options.sealer && { sealer: options.sealer }), ...(options.command !== undefined && { command: options.command }), onNote, create: false }, options);
    let reader: LogReader | undefined;
    try {
      const ledger = new EmbeddedLedger(files.sealer, undefined, files.lock, files.head);
      ledger.readOnly = true;
      // A reader goes through runs one at a time (verify --all), or reads one: one finished run in memory is enough.
      ledger.retainFinishedRuns = Math.max(1, options.retainFinishedRuns ?? 1);
      if (existsSync(files.logPath)) ledger.reader = reader = new LogReader(files.logPath);
      ledger.restore(files.index);
      return ledger;
    } catch (error) {
      reader?.close();
      files.release();
      throw error;
    }
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
    return keys.map((key) => stored(this.get(key), this.sharedReads));
  }

  protected readForUpdate(key: Key): Stored | undefined {
    return stored(this.get(key), this.sharedReads);
  }

  protected put(key: Key, item: Stored, expected: Stored | undefined | 'any'): boolean {
    if (expected !== 'any' && !this.still(key, expected)) return false;
    this.storeItem(key, item);
    return true;
  }

  /** Whether the item at `key` is still `expected`'s (absent, the same item, or the version a handed mark names). */
  private still(key: Key, expected: Stored | undefined): boolean {
    const basis = expected?.basis;
    if (basis instanceof HandedVersion) {
      const current = this.get(key);
      return current !== undefined && this.markOf(current) === basis.mark;
    }
    return sameItem(this.get(key), basis as Item | undefined);
  }

  /** EmbeddedLedgerOptions `handsState`: false, no version is marked (`versionOf`), so none is handed. */
  private handsState = true;
  // A version mark (StorageLedger `versionOf`): a sealed item's seal, which covers its key and
  // content (a ledger on disk: any instance opened on it names the same version alike); an item in
  // memory, unsealed, is a new object at every write, never changed, so its identity is its version,
  // marked by this instance alone (another knows none of its marks: a write given one fails its
  // condition, and the step reads).
  private readonly marks = new WeakMap<Item, string>();
  private readonly writtenItems = new WeakMap<Stored, Item>();
  private marked = 0;
  // Made at the first mark: a ledger that hands no state, or only reads, marks nothing, and the
  // first randomUUID of a process fills Node's pool of them (~0.2 ms of a `savepoint replay`).
  private instance: string | undefined;
  private markOf(item: Item): string {
    if (item.seal !== '') return `seal:${item.seal}`;
    let mark = this.marks.get(item);
    if (mark === undefined) this.marks.set(item, (mark = `${(this.instance ??= randomUUID())}:${++this.marked}`));
    return mark;
  }
  protected readonly versions: EngineVersions = {
    versionOf: (stored) => {
      if (!this.handsState) return undefined;
      const item = this.writtenItems.get(stored) ?? (stored.basis as Item | undefined);
      return item && typeof item === 'object' && !(item instanceof HandedVersion) ? this.markOf(item) : undefined;
    },
    atVersion: (mark) => ({ record: {}, meta: {}, basis: new HandedVersion(mark) }),
    // One synchronous section: no transaction of another writer is ever in flight.
    putChecked: (writes) => (this.putItems(writes) ? 'written' : 'changed'),
    seal: (runId, sealed) => this.sealer.seal(handedKey(runId), sealed),
  };

  // Every condition checked, then every item stored, in one synchronous section: no other write
  // lands in between. On disk each item is its own line, in the order given (a call before its
  // effect when claiming, an effect before its call when completing, as the separate writes were):
  // a crash between the two lines leaves the first alone, a state the rules of protocol.ts take up
  // on the retry.
  protected putItems(writes: readonly ItemWrite[]): boolean {
    if (!writes.every(({ key, expected }) => this.still(key, expected))) return false;
    for (const { key, item } of writes) if (item) this.storeItem(key, item);
    return true;
  }

  private storeItem(key: Key, item: Stored): void {
    const { countedSteps, guardReasons } = item.meta;
    // Set field by field (a literal of conditional spreads copies an object for each).
    const hidden: Hidden = {};
    if (countedSteps) hidden.countedSteps = countedSteps;
    if (guardReasons) hidden.guardReasons = guardReasons;
    if (isPendingApproval(item.record)) hidden.pendingApproval = true;
    this.store(key, item.record, hidden);
    // What `versionOf` names an item written by (none, when no version is marked).
    if (!this.handsState) return;
    const stored = this.get(key);
    if (stored) this.writtenItems.set(item, stored);
  }

  // Every item was verified when it was read into memory.
  protected queryPartition(pk: string, fromSk?: string): Stored[] {
    const items = this.partition(pk)?.sorted() ?? [];
    // Sort-key order, as a DynamoDB query returns the partition: TURN#0001, TURN#0001#CALL#01, …
    // From `fromSk` on, found by halving (a step reads its turn's records of a run of hundreds).
    const from = fromSk === undefined ? 0 : firstAtOrAfter(items, fromSk);
    const found: Stored[] = new Array(items.length - from);
    for (let index = from; index < items.length; index++) found[index - from] = { record: copy(items[index]![1], this.sharedReads) as Record<string, unknown>, meta: {} };
    return found;
  }

  // The newest `limit` runs by the creation time each run partition keeps (the order listRuns
  // sorts in): only their run records are read. A record read back from disk that fails its
  // checks is named to `onDamaged` (or thrown without it).
  protected async newestRunRecords(limit: number, options: DamagedRunOptions): Promise<RunRecord[]> {
    this.guarded({ scan: true });
    return runRecords(this.newestRuns(limit), options);
  }

  protected async queryRunsOf(agent: string, limit: number, options: DamagedRunOptions & { notAfter?: string }): Promise<RunRecord[]> {
    // Every run, newest first, then the agent's: a local ledger holds one machine's runs (the keyed
    // index is DynamoDB's). A run record is read only until `limit` of the agent's are found, and
    // none created after `notAfter` (the creation time is the partition's, known unread).
    const { notAfter } = options;
    const runs: RunRecord[] = [];
    for (const listed of this.newestRuns(Number.MAX_SAFE_INTEGER)) {
      if (runs.length >= limit) break;
      if (notAfter !== undefined && listed[1].createdAt > notAfter) continue;
      runs.push(...runRecords([listed], options).filter((run) => run.agent === agent));
    }
    return runs;
  }

  /**
   * The newest `limit` runs, each with its creation time and how to read its run record (none is
   * read here). The runs let go of from memory come from the list of the newest of them when it
   * reaches far enough (every run it leaves out is older than all it holds), else from the whole
   * cold store.
   */
  private newestRuns(limit: number): [string, Listed][] {
    const held = [...this.partitions].filter(([pk, partition]) => pk.startsWith('RUN#') && partition.createdAt !== undefined).map(heldRun);
    const cold = this.cold && (this.listed.complete || limit <= this.listed.runs.length ? this.listed.runs : this.listAllCold());
    for (const run of cold ?? []) if (!this.partitions.has(run.pk)) held.push([run.pk, { createdAt: run.createdAt, read: () => readColdItems(this.lines(), this.sealer, [run.item])[0]![1] }]);
    // In the one order of runs, runs of one instant by run id: the same whichever of them are in memory.
    return held.sort(([pkA, a], [pkB, b]) => newestListed({ pk: pkA, createdAt: a.createdAt }, { pk: pkB, createdAt: b.createdAt })).slice(0, limit);
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

  // The effects in memory, and those let go of to the cold store (read back when each is read).
  protected async effectKeys(): Promise<string[]> {
    this.guarded({ scan: true });
    const pks = new Set([...this.partitions.keys()].filter((pk) => pk.startsWith(EFFECT_PREFIX)));
    for (const group of this.cold?.groups() ?? []) if (group.group.startsWith(EFFECT_PREFIX)) pks.add(group.group);
    return [...pks].sort(byCodeUnits).map((pk) => pk.slice(EFFECT_PREFIX.length));
  }

  protected async queryPendingApprovals(): Promise<ApprovalRecord[]> {
    // Sorted like the index: by decideBy (then by key, so that ties come out the same every time).
    return [...this.pending]
      .map(([id, key]) => ({ id, item: this.get(key) as Item<ApprovalRecord> }))
      .sort((a, b) => byCodeUnits(a.item.record.decideBy, b.item.record.decideBy) || byCodeUnits(a.id, b.id))
      .map(({ item }) => copy(item, this.sharedReads));
  }

  protected putTaskToken(key: Key, taskToken: string): void {
    this.store(key, { taskToken });
  }

  protected async readTaskToken(key: Key): Promise<string | undefined> {
    return (this.get(key)?.record as { taskToken?: string } | undefined)?.taskToken;
  }

  // Large values by reference (ledger/blobs.ts), under the DynamoDB ledger's keys.
  protected async writeBlob(keys: readonly Key[], chunks: readonly string[]): Promise<void> {
    chunks.forEach((data, index) => this.store(keys[index]!, { kind: 'blob', data }));
  }

  protected async readBlob(pk: string, prefix: string): Promise<string[]> {
    return (this.partition(pk)?.sorted() ?? [])
      .filter(([sk]) => sk.startsWith(prefix))
      .map(([, item]) => String((item.record as { data?: unknown }).data));
  }

  // ── retention (`savepoint prune`, pruning.ts) ─────────────────────────────────────────────

  // Each item's digest is its log line (without its chain): a copy of the log reproduces a prune record's.
  protected queryRunItems(runId: string, first?: number): RunItem[] {
    const pks = first === undefined ? runPartitions(runId) : [runKey(runId).pk];
    const items = pks.flatMap((pk) =>
      (this.partition(pk)?.sorted() ?? []).map(([sk, stored]): RunItem => {
        const writeKey = writeKeyOf(stored.record as Record<string, unknown>);
        return { key: { pk, sk }, basis: stored, digest: line({ pk, sk }, stored), ...(writeKey !== undefined && { writeKey }) };
      }),
    );
    return first === undefined ? items : items.slice(0, first);
  }

  // The log is rewritten without the items deleted (as a compaction rewrites it, crash-safe): what
  // was let go of from memory is read back first, and the cold store emptied, so that nothing
  // deleted comes back from there.
  protected deleteItems(deletes: readonly ItemDelete[]): boolean[] {
    if (deletes.length === 0) return [];
    if (this.readOnly) throw new Error('the ledger was opened to read (EmbeddedLedger.openToRead): it takes no write');
    this.warmAll();
    const deleted = deletes.map(({ key, expected }) => {
      const partition = this.partitions.get(key.pk);
      const current = partition?.items.get(key.sk);
      if (!partition || !current || (expected && !sameItem(current, expected.basis as Item))) return false;
      partition.delete(key.sk);
      const { approvalId } = current.record as { approvalId?: unknown };
      if (typeof approvalId === 'string') this.approvalsById.delete(approvalId);
      this.pending.delete(`${key.pk}|${key.sk}`);
      if (partition.items.size === 0) this.partitions.delete(key.pk);
      const runId = runOfPartition(key.pk);
      if (runId !== undefined && !this.partitions.has(runKey(runId).pk)) this.finishedInMemory.delete(runId);
      return true;
    });
    if (this.log) this.rewriteLive();
    return deleted;
  }
}

/** The index of the first of `items` (in sort-key order) whose key is `sk` or after it (their length: none). */
function firstAtOrAfter(items: readonly (readonly [string, unknown])[], sk: string): number {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (items[middle]![0] < sk) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The basis of an item only checked, at a version handed to the step (StorageLedger `atVersion`). */
class HandedVersion {
  constructor(readonly mark: string) {}
}
