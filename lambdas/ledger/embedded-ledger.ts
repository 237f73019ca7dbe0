import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AppendLog } from './append-log.js';
import { LockFile } from './lock-file.js';
import { blobKey, isPendingApproval, type Key, type Stored } from './protocol.js';
import { ChainCheck, chained, line, LogHead, parseEntry, splitChained, verifyLog, verifySeal, type Hidden, type Item, type LogEntry } from './sealed-log.js';
import { hmacSealer, ephemeralSealer, readOrCreateKeyFile, type LedgerSealer } from './seal.js';
import { StorageLedger } from './storage-ledger.js';
import { LedgerIntegrityError } from '../shared/errors.js';
import { runKey, tokenKey, type ApprovalRecord, type RunRecord } from './records.js';

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
}

/**
 * What `prune` removed, kept in the ledger as a sealed record of its own (partition `PRUNED`), so
 * that `savepoint verify` can tell a pruned run from a lost one: the run ids, how many records
 * they held, and the sha256 of those records' log lines in key order (what a kept copy of the old
 * log can be checked against).
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
}

/** The partition of the prune records. */
const PRUNED_PK = 'PRUNED';

/** The statuses of a run that is over: a `failed` run is not (it can be resumed). */
const FINISHED: ReadonlySet<RunRecord['status']> = new Set(['succeeded', 'stopped', 'killed']);

/** The seal key's file in a state directory (`keys/`, like the approval keys). */
export const SEAL_KEY_FILE = 'keys/ledger-seal.key';


const RUN_SK = runKey('').sk;
/** A line's partition key, read from its start (every line begins with it: sealed-log.ts `line`). */
const PK = /^\{"pk":("(?:[^"\\]|\\.)*")/;
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
  /** Set when opened for one run's records only (`openRun`): the ledger reads, and refuses writes. */
  private readOnly?: string;

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

  /** Opens the ledger in memory, or on disk in `options.dir` (replaying, and maybe compacting, its log). */
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
      if (!existsSync(logPath) && (head.lines > 0 || (keyExisted && options.sealer === undefined && !head.existed))) {
        throw new LedgerIntegrityError(
          { record: logPath },
          head.lines > 0
            ? `the file is missing, but ${head.path} records ${head.lines} lines of it (the ledger was deleted)`
            : `the file is missing, but the seal key ${keyPath} shows that a ledger was kept in ${dir} (the ledger was deleted)`,
        );
      }
      let entries: LogEntry[];
      let tip = '';
      const accept = (read: readonly unknown[]) => (tip = verifyLog(read as LogEntry[], head!, sealer, logPath));
      ({ log, entries } = AppendLog.open(logPath, parseEntry, { fsync: options.fsync, onNote, accept }));
      const ledger = new EmbeddedLedger(sealer, log, lock, head);
      ledger.load(entries, tip);
      ledger.compactIfLarge(options.compaction ?? { ratio: 4, minBytes: 1 << 20 }, onNote);
      return ledger;
    } catch (error) {
      log?.close();
      head?.close();
      lock.release();
      throw error;
    }
  }

  /**
   * Opens the ledger in `options.dir` for reading one run: what `savepoint status <runId>` needs,
   * in time and memory that do not grow with the other runs the log holds. Every line's chain is
   * checked against the one before it and the head (the chain covers each line's exact bytes, so
   * the other runs' lines are verified as text, unparsed); only the run's own partitions (its run,
   * turns, calls and approvals, its task tokens and blobs) and the ledger-wide ones (the global
   * kill switch, breakers, business-key effects) are parsed, seal-checked and kept. The file is
   * read in chunks, never whole. Writes are refused: the ledger is read-only, and the lock is held
   * until `close` so that no engine rewrites the log meanwhile.
   */
  static openRun(runId: string, options: Omit<EmbeddedLedgerOptions, 'compaction' | 'fsync'> & { dir: string }): EmbeddedLedger {
    const { dir } = options;
    const onNote = options.onNote ?? ((note: string) => console.warn(`savepoint ledger: ${note}`));
    const lock = LockFile.acquire(join(dir, 'ledger.lock'), onNote);
    let head: LogHead | undefined;
    try {
      const logPath = join(dir, 'ledger.jsonl');
      const sealer = options.sealer ?? hmacSealer(readOrCreateKeyFile(join(dir, SEAL_KEY_FILE)));
      head = LogHead.open(join(dir, 'ledger.head'));
      if (!existsSync(logPath) && head.lines > 0) throw new LedgerIntegrityError({ record: logPath }, `the file is missing, but ${head.path} records ${head.lines} lines of it (the ledger was deleted)`);
      const ledger = new EmbeddedLedger(sealer, undefined, lock, head);
      ledger.readOnly = runId;
      const own = new Set(runPartitions(runId));
      const chain = new ChainCheck(sealer, logPath);
      AppendLog.readLines(logPath, (text, index) => {
        const split = splitChained(text);
        const pk = PK.exec(text)?.[1];
        if (!split || pk === undefined) throw new LedgerIntegrityError({ record: `${logPath}:${index + 1}` }, 'the line carries no key, seal and chain (written without the ledger key)');
        const key = { pk: JSON.parse(pk) as string, sk: '(not read)' };
        chain.next(split.body, split.chain, key);
        if (RUN_SCOPED.test(key.pk) && !own.has(key.pk)) return;
        let entry: LogEntry;
        try {
          entry = parseEntry(JSON.parse(text), text);
        } catch (error) {
          throw new Error(`${logPath}:${index + 1}: corrupt ledger log line (${error instanceof Error ? error.message : String(error)})`, { cause: error });
        }
        verifySeal(entry, sealer);
        ledger.set(entry, item(entry.record, entry.hidden ?? {}, entry.seal));
      });
      ledger.tip = chain.end(head);
      return ledger;
    } catch (error) {
      head?.close();
      lock.release();
      throw error;
    }
  }

  /** Loads the entries of a verified log (`verifyLog`), and brings its head up to date. */
  private load(entries: LogEntry[], tip: string): void {
    for (const entry of entries) this.set(entry, item(entry.record, entry.hidden ?? {}, entry.seal));
    this.tip = tip;
    if (this.head!.needsWrite(entries.length, tip, this.sealer)) this.head!.write(entries.length, tip, this.sealer);
  }

  /** Closes the log and releases the directory; the ledger cannot be used afterwards. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.log?.close();
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
    if (expected !== 'any' && this.get(key) !== expected?.basis) return false;
    const { countedSteps, guardReasons } = item.meta;
    this.store(key, item.record, {
      ...(countedSteps && { countedSteps }),
      ...(guardReasons && { guardReasons }),
      ...(isPendingApproval(item.record) && { pendingApproval: true }),
    });
    return true;
  }

  protected queryRun(runId: string, fromSk?: string): Stored[] {
    const items = this.partition(runKey(runId).pk)?.sorted() ?? [];
    // Sort-key order, as a DynamoDB query returns the partition: TURN#0001, TURN#0001#CALL#01, …
    return items.filter(([sk]) => fromSk === undefined || sk >= fromSk).map(([, item]) => ({ record: copy(item) as Record<string, unknown>, meta: {} }));
  }

  // Every record here was verified when the log was opened: there is no damaged run to name.
  protected async scanRuns(): Promise<RunRecord[]> {
    const runs: RunRecord[] = [];
    for (const partition of this.partitions.values()) {
      const run = partition.items.get(RUN_SK) as Item<RunRecord> | undefined;
      if (run) runs.push(copy(run));
    }
    return runs;
  }

  protected async queryRunning(): Promise<RunRecord[]> {
    return (await this.scanRuns()).filter((run) => run.status === 'running');
  }

  protected approvalById(approvalId: string): Key | undefined {
    return this.approvalsById.get(approvalId);
  }

  async listPendingApprovals(): Promise<ApprovalRecord[]> {
    // Sorted like the index: by decideBy (then by key, so that ties come out the same every time).
    return [...this.pending]
      .map(([id, key]) => ({ id, item: this.get(key) as Item<ApprovalRecord> }))
      .sort((a, b) => a.item.record.decideBy.localeCompare(b.item.record.decideBy) || a.id.localeCompare(b.id))
      .map(({ item }) => copy(item));
  }

  protected putTaskToken(key: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>, taskToken: string): void {
    this.store(tokenKey(key), { taskToken });
  }

  async getTaskToken(key: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>): Promise<string | undefined> {
    return (this.get(tokenKey(key))?.record as { taskToken?: string } | undefined)?.taskToken;
  }

  // Large values by reference (ledger/blobs.ts), under the DynamoDB ledger's keys.
  async putBlob(runId: string, digest: string, chunks: readonly string[]): Promise<void> {
    chunks.forEach((data, index) => this.store(blobKey(runId, digest, index), { kind: 'blob', data }));
  }

  async getBlob(runId: string, digest: string): Promise<string[]> {
    const prefix = `${digest}#`;
    return (this.partition(blobKey(runId, digest, 0).pk)?.sorted() ?? [])
      .filter(([sk]) => sk.startsWith(prefix))
      .map(([, item]) => String((item.record as { data?: unknown }).data));
  }

  // ── retention ──────────────────────────────────────────────────────────────────────────

  /**
   * Removes the records of every run that finished (succeeded, stopped or killed) before
   * `finishedBefore`: its run, turns, calls and approvals, its task tokens and blobs. The log is
   * rewritten without them (as a compaction rewrites it, crash-safe), then a sealed PruneRecord
   * naming them is appended. Business-key effects (EFFECT#…) are kept: they are what keeps a
   * refund paid by a pruned run from being paid again. Returns the record, or undefined when no
   * run qualified (nothing is written then).
   */
  prune(finishedBefore: Date, now: Date): PruneRecord | undefined {
    if (this.readOnly !== undefined) throw new Error(`the ledger was opened to read run ${this.readOnly} (EmbeddedLedger.openRun): it takes no write`);
    const cutoff = finishedBefore.toISOString();
    const runIds: string[] = [];
    for (const partition of this.partitions.values()) {
      const run = partition.items.get(RUN_SK)?.record as RunRecord | undefined;
      if (run && FINISHED.has(run.status) && run.finishedAt !== undefined && run.finishedAt < cutoff) runIds.push(run.runId);
    }
    if (runIds.length === 0) return undefined;
    runIds.sort();
    const digest = createHash('sha256');
    let records = 0;
    for (const runId of runIds) {
      for (const pk of runPartitions(runId)) {
        const partition = this.partitions.get(pk);
        if (!partition) continue;
        for (const [sk, stored] of partition.sorted()) {
          digest.update(line({ pk, sk }, stored)).update('\n');
          records++;
          const { approvalId } = stored.record as { approvalId?: unknown };
          if (typeof approvalId === 'string') this.approvalsById.delete(approvalId);
          this.pending.delete(`${pk}|${sk}`);
        }
        this.partitions.delete(pk);
      }
    }
    const summary: PruneRecord = { kind: 'prune', prunedAt: now.toISOString(), finishedBefore: cutoff, runIds, records, digest: `sha256:${digest.digest('hex')}` };
    if (this.log) this.rewriteLive();
    this.store({ pk: PRUNED_PK, sk: `PRUNE#${summary.prunedAt}#${this.partitions.get(PRUNED_PK)?.items.size ?? 0}` }, summary);
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
    return this.prunes().flatMap((prune) => {
      const where = `prune record of ${prune.prunedAt}`;
      const problems: string[] = [];
      if (prune.runIds.length === 0 || prune.records < prune.runIds.length) problems.push(`${where}: ${prune.runIds.length} runs and ${prune.records} records do not add up`);
      if (!/^sha256:[0-9a-f]{64}$/.test(prune.digest)) problems.push(`${where}: its digest ${prune.digest} is not a sha256`);
      for (const runId of prune.runIds) if (this.partition(runKey(runId).pk)) problems.push(`${where}: run ${runId} is pruned, yet its records are in the ledger`);
      return problems;
    });
  }

  // ── the store ───────────────────────────────────────────────────────────────────────────

  private partition(pk: string): Partition | undefined {
    if (this.closed) throw new Error('the ledger is closed');
    return this.partitions.get(pk);
  }

  private get(key: Key): Item | undefined {
    return this.partition(key.pk)?.items.get(key.sk);
  }

  /** Commits one write (log first, then memory). */
  private store(key: Key, record: unknown, hidden: Hidden = {}): void {
    if (this.closed) throw new Error('the ledger is closed');
    if (this.readOnly !== undefined) throw new Error(`the ledger was opened to read run ${this.readOnly} (EmbeddedLedger.openRun): it takes no write`);
    // One serialization: the stored record is parsed from the text the log line carries.
    const text = JSON.stringify(record);
    const json = JSON.parse(text) as unknown;
    // The seal protects a record at rest: in memory there is no rest (nothing outside this process
    // holds the item, and it dies with it), so only a ledger with a log seals what it writes.
    const item: Item = { record: json, json: text, hidden, seal: this.log ? this.sealer.seal(key, { ...(json as object), ...hidden }) : '' };
    if (this.log) {
      const body = line(key, item);
      const chain = this.sealer.chain(this.tip, body);
      this.log.append(chained(body, chain));
      this.tip = chain;
      this.head!.write(this.log.lines, chain, this.sealer);
    }
    this.set(key, item);
  }

  /** Puts an item in memory, and keeps the two approval indexes in step with it. */
  private set(key: Key, item: Item): void {
    let partition = this.partitions.get(key.pk);
    if (!partition) this.partitions.set(key.pk, (partition = new Partition()));
    partition.put(key.sk, item);
    const { approvalId } = item.record as { approvalId?: unknown };
    if (typeof approvalId === 'string') this.approvalsById.set(approvalId, key);
    if (item.hidden.pendingApproval) this.pending.set(`${key.pk}|${key.sk}`, key);
    else this.pending.delete(`${key.pk}|${key.sk}`);
  }

  private compactIfLarge(threshold: { ratio: number; minBytes: number }, onNote: (note: string) => void): void {
    if (!this.log || this.log.bytes < threshold.minBytes) return;
    const live = this.liveLines();
    if (this.log.bytes <= threshold.ratio * live.bytes) return;
    const before = this.log.bytes;
    this.rewriteLive(live);
    onNote(`${this.log.path}: compacted ${before} bytes of log to ${this.log.bytes} bytes of live state`);
  }

  /** The live state as log lines, chained from the start. */
  private liveLines(): { lines: string[]; bytes: number; tip: string } {
    const lines: string[] = [];
    let bytes = 0;
    let tip = '';
    for (const [pk, partition] of this.partitions) {
      for (const [sk, stored] of partition.items) {
        const body = line({ pk, sk }, stored);
        tip = this.sealer.chain(tip, body);
        const text = chained(body, tip);
        lines.push(text);
        bytes += Buffer.byteLength(text) + 1;
      }
    }
    return { lines, bytes, tip };
  }

  /** Replaces the log by the live state (compaction, prune). */
  private rewriteLive(live = this.liveLines()): void {
    const { lines, tip } = live;
    // The head names both logs while the new one replaces the old: a crash in between leaves a
    // head that matches whichever of the two is on disk.
    const head = this.head!;
    head.write(lines.length, tip, this.sealer, { lines: head.lines, chain: this.tip });
    this.log!.rewrite(lines);
    this.tip = tip;
    head.write(lines.length, tip, this.sealer);
  }
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

/** The items of one partition, and their sort-key order (computed when a query needs it). */
class Partition {
  readonly items = new Map<string, Item>();
  private order?: [string, Item][];

  put(sk: string, stored: Item): void {
    if (!this.items.has(sk)) this.order = undefined;
    else if (this.order) this.order.find((entry) => entry[0] === sk)![1] = stored;
    this.items.set(sk, stored);
  }

  sorted(): [string, Item][] {
    // Plain code-unit order: for the ASCII keys of records.ts, the byte order DynamoDB sorts by.
    this.order ??= [...this.items.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map((sk) => [sk, this.items.get(sk)!]);
    return this.order;
  }
}

/** The partitions that hold one run's records (RUN_SCOPED). */
function runPartitions(runId: string): string[] {
  return [runKey(runId).pk, tokenKey({ runId, turn: 0, call: 0 }).pk, blobKey(runId, '', 0).pk];
}

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
