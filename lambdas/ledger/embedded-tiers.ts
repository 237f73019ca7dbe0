import type { AppendLog, LogReader, Span } from './append-log.js';
import { ColdStore, type ColdGroup, type ColdItem } from './cold-store.js';
import { liveLines, readColdItems, readIndexed, readLines, type LineSource } from './embedded-files.js';
import { copy, crossRunPartition, frozenInPlace, groupOfPartition, Partition, RUN_SK, runOfPartition } from './embedded-memory.js';
import { NOT_PLAIN, plainCopy } from '../shared/plain-copy.js';
import type { LedgerIndex } from './ledger-index.js';
import type { DamagedRunOptions } from './ledger.js';
import type { LockFile } from './lock-file.js';
import type { Key } from './protocol.js';
import { FINISHED_STATUSES, runPartitions } from './pruning.js';
import { chained, itemText, sealedLine, textSeal, type Hidden, type Item, type LogEntry, type LogHead } from './sealed-log.js';
import type { LedgerSealer } from './seal.js';
import { StorageLedger } from './storage-ledger.js';
import { LedgerIntegrityError } from '../shared/errors.js';
import { newestFirst } from '../records/run-order.js';
import { runKey, type RunRecord } from '../records/ledger-records.js';

/**
 * The embedded ledger's store and its tiers: the partitions in memory (embedded-memory.ts), each
 * write appended to the log first (embedded-files.ts), and, on disk, what is let go of from memory
 * — the finished runs past `retainFinishedRuns`, the effects past `retainEffects` — noted in the
 * cold store (cold-store.ts) and read back from the log when asked for. The primitives over it are
 * embedded-ledger.ts.
 */
export abstract class TieredStore extends StorageLedger {
  protected readonly partitions = new Map<string, Partition>();
  /** approvalId → item key (the byApprovalId GSI). */
  protected readonly approvalsById = new Map<string, Key>();
  /** The pending approvals (the pendingApprovals GSI), by `pk|sk`. */
  protected readonly pending = new Map<string, Key>();
  protected closed = false;
  /** Finished runs whose partitions are in memory, least recently used first (`retainFinishedRuns`). */
  protected readonly finishedInMemory = new Map<string, true>();
  protected retainFinishedRuns = 16;
  /** Business-key effect partitions in memory, least recently used first (`retainEffects`). */
  protected readonly effectsInMemory = new Map<string, true>();
  protected retainEffects = 64;
  /**
   * Opened to write on disk: where the partitions let go of from memory are noted (cold-store.ts),
   * and the newest of the finished runs there (`listedFinishedRuns`), newest first, each with its
   * run record's line; `complete` while no run let go of has dropped off its end.
   */
  protected cold?: ColdStore;
  protected listed: { runs: ListedRun[]; limit: number; complete: boolean } = { runs: [], limit: 100, complete: true };
  /** Set when opened to read (`openToRead`): the ledger reads, and refuses writes. */
  protected readOnly = false;
  /** Reads hand out the stored records, frozen (`EmbeddedLedgerOptions.sharedReads`): in memory, they are stored frozen. */
  protected sharedReads = false;
  /** Opened to read: where the log's lines are read from (there is no AppendLog). */
  protected reader?: LogReader;
  protected onNote: (note: string) => void = () => undefined;

  /** The chain of the last line of the log (`''` for an empty log). */
  protected tip = '';

  protected constructor(
    protected readonly sealer: LedgerSealer,
    protected readonly log?: AppendLog<LogEntry>,
    protected readonly lock?: LockFile,
    protected readonly head?: LogHead,
  ) {
    super();
  }

  /** The lines at `spans` read back from the log, each checked (embedded-files.ts `readLines`). */
  protected readLines(spans: readonly Span[]): [string, Item, Span][] {
    return readLines(this.lines(), this.sealer, spans);
  }

  /** Where the log's lines are read from: the log appended to, or (opened to read) its reader. */
  protected lines(): LineSource {
    return (this.log ?? this.reader)!;
  }

  /**
   * Takes the partitions, the approval indexes and the chain's tip from an index: every partition
   * on disk only, its lines read when it is asked for, and where they are taken from the index then.
   */
  protected restore(index: LedgerIndex): void {
    for (const pk of index.partitionKeys()) {
      // Its lines are checked against the index's record of them (parsed from the index when read, not kept).
      const partition = new Partition((spans) => readIndexed(this.lines(), this.sealer, spans, index.partition(pk)));
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
  protected take(index: LedgerIndex): void {
    const pendingGroups = new Set([...index.pending.values()].map((key) => groupOfPartition(key.pk)));
    const coldGroups = new Map<string, ColdItem[]>();
    for (const pk of index.partitionKeys()) {
      const group = groupOfPartition(pk);
      const status = group.startsWith('RUN#') ? index.runs.get(group)?.status : undefined;
      const done = crossRunPartition(pk) || (status !== undefined && FINISHED_STATUSES.has(status as RunRecord['status']));
      const indexed = index.partition(pk)!;
      if (done && !pendingGroups.has(group)) {
        if (!coldGroups.has(group)) coldGroups.set(group, []);
        for (const { sk, offset, bytes, hash } of indexed.items.values()) coldGroups.get(group)!.push({ pk, sk, offset, bytes, seal: '', hash });
        continue;
      }
      const spans = [...indexed.items.values()].map(({ offset, bytes }) => ({ offset, bytes }));
      this.partitions.set(pk, Partition.filled((lines) => this.readLines(lines), readIndexed(this.lines(), this.sealer, spans, indexed), false));
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
    // Built from the log at this index: kept as it is on disk when an earlier open built it from the same log.
    this.cold!.build(groups, index.log);
    this.listNewest(listed);
    const { lines, tip } = index.log;
    this.tip = tip;
    if (this.head!.needsWrite(lines, tip, this.sealer)) this.head!.write(lines, tip, this.sealer);
  }

  // ── the store: memory, the log, and the tiers between them ──────────────────────────────

  protected partition(pk: string): Partition | undefined {
    if (this.closed) throw new Error('the ledger is closed');
    const partition = this.partitions.get(pk) ?? this.warm(pk);
    // A finished run's or an effect's partition, asked for: the most recently used now (and read
    // back, if it was evicted). In memory only, nothing is let go of: no order is kept on a read.
    if (partition && (this.log || this.reader) && this.touch(pk)) this.evictFinished();
    return partition;
  }

  /** Makes `pk`'s group the most recently used of the finished runs or effects in memory; whether it is one of them. */
  protected touch(pk: string): boolean {
    const runId = runOfPartition(pk);
    const lru = runId !== undefined ? (this.finished(runId) ? this.finishedInMemory : undefined) : this.cold && crossRunPartition(pk) ? this.effectsInMemory : undefined;
    if (!lru) return false;
    const key = runId ?? pk;
    lru.delete(key);
    lru.set(key, true);
    return true;
  }

  protected get(key: Key): Item | undefined {
    return this.partition(key.pk)?.items.get(key.sk);
  }

  /** Commits one write (log first, then memory). */
  protected store(key: Key, record: unknown, hidden: Hidden = {}): void {
    if (this.closed) throw new Error('the ledger is closed');
    if (this.readOnly) throw new Error('the ledger was opened to read (EmbeddedLedger.openToRead): it takes no write');
    if (!this.log && this.storeInMemory(key, record, hidden)) return;
    // One serialization, for the log line; the stored record is a copy equal to the text parsed back
    // (copied without the parse when it is plain data: every write of a step does this).
    const text = JSON.stringify(record);
    const plain = plainCopy(record);
    const json = plain === NOT_PLAIN ? (JSON.parse(text) as unknown) : plain;
    // The seal protects a record at rest: in memory there is no rest (nothing outside this process
    // holds the item, and it dies with it), so only a ledger with a log seals what it writes: the
    // item's text in its line (sealed-log.ts `textSeal`).
    const unsealed = this.log && itemText(key, text, hidden);
    const seal = unsealed ? textSeal(unsealed, this.sealer) : '';
    const item: Item = { record: json, json: text, hidden, seal };
    let span: Span | undefined;
    if (this.log && unsealed) {
      const body = sealedLine(unsealed, seal);
      const chain = this.sealer.chain(this.tip, body);
      span = this.log.append(chained(body, chain));
      this.tip = chain;
      this.head!.write(this.log.lines, chain, this.sealer);
    }
    this.set(key, item, span);
    this.evictFinished();
  }

  /**
   * A write of a ledger with no log (nothing sealed, no line written), when the record is plain
   * data: stored as its copy, its text written only if asked for (a prune's digest), not on every
   * write; the copy is never changed, so the text is the record's. A store that shares its records
   * keeps the record itself, frozen where it is (`frozenInPlace`), or else a copy frozen as it is
   * made. False (nothing stored) for a record that is not plain data: `store` copies it through its text.
   */
  private storeInMemory(key: Key, record: unknown, hidden: Hidden): boolean {
    let copy = this.sharedReads ? frozenInPlace(record) : NOT_PLAIN;
    if (copy === NOT_PLAIN) copy = plainCopy(record, this.sharedReads);
    if (copy === NOT_PLAIN) return false;
    this.set(key, new UnsealedItem(copy, hidden));
    this.evictFinished();
    return true;
  }

  /** Puts an item in memory (its line at `span` in the log), and keeps the approval indexes and the finished runs in step with it. */
  protected set(key: Key, item: Item, span?: Span): void {
    // A partition let go of is read back before it takes the write: the write adds to it, it does not replace it.
    let partition = this.partitions.get(key.pk) ?? this.warm(key.pk);
    if (!partition) this.partitions.set(key.pk, (partition = new Partition((spans) => this.readLines(spans))));
    partition.put(key.sk, item, span);
    // The order of use, and which finished runs are in memory, are for letting go (`evictFinished`):
    // in memory only, nothing is let go of.
    if (this.log || this.reader) {
      const runId = runOfPartition(key.pk);
      if (runId !== undefined) this.finishedInMemory.delete(runId);
      this.touch(key.pk);
    }
    const { approvalId } = item.record as { approvalId?: unknown };
    if (typeof approvalId === 'string') this.approvalsById.set(approvalId, key);
    if (item.hidden.pendingApproval) this.pending.set(`${key.pk}|${key.sk}`, key);
    else this.pending.delete(`${key.pk}|${key.sk}`);
  }

  protected finished(runId: string): boolean {
    const status = this.partitions.get(runKey(runId).pk)?.status;
    return status !== undefined && FINISHED_STATUSES.has(status as RunRecord['status']);
  }

  /**
   * Drops from memory the records of the finished runs past `retainFinishedRuns` and of the effects
   * past `retainEffects` (least recently used first). Opened to write, they are let go of entirely
   * (`letGo`: noted in the cold store); opened to read, their partitions keep where their lines are.
   */
  protected evictFinished(): void {
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
  protected letGo(group: string, pks: readonly string[]): void {
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

  /**
   * Puts a run let go of in the list of the newest of them (replacing its older place), keeping the
   * list at its limit. In the one order of runs (`newestListed`), runs of its instant included: the
   * run dropped off the end comes after every run the list holds, so any the list leaves out does.
   */
  protected list(run: ListedRun): void {
    const runs = this.listed.runs.filter((listed) => listed.pk !== run.pk);
    let at = runs.findIndex((listed) => newestListed(run, listed) < 0);
    if (at < 0) at = runs.length;
    runs.splice(at, 0, run);
    if (runs.length > this.listed.limit) {
      runs.length = this.listed.limit;
      this.listed.complete = false;
    }
    this.listed.runs = runs;
  }

  /** Every run let go of, from the whole cold store; the list of the newest made anew from them. */
  protected listAllCold(): ListedRun[] {
    const runs: ListedRun[] = [];
    for (const group of this.cold!.groups()) {
      const item = group.items.find((item) => item.pk === group.group && item.sk === RUN_SK);
      if (group.run && item) runs.push({ pk: group.group, createdAt: group.run.createdAt, item });
    }
    this.listNewest(runs);
    return runs;
  }

  /** The list of the newest runs let go of made anew from `runs` (every one of them), newest first. */
  protected listNewest(runs: ListedRun[]): void {
    runs.sort(newestListed);
    this.listed = { runs: runs.slice(0, this.listed.limit), limit: this.listed.limit, complete: runs.length <= this.listed.limit };
  }

  /**
   * The partitions of `pk`'s group, read back from the log into memory if the group was let go of
   * (every line's seal checked, and checked to be the line the cold store noted); undefined when
   * `pk` has no partition. Its approvals are in the approval index again.
   */
  protected warm(pk: string): Partition | undefined {
    // In memory, nothing is let go of (and every read of a partition not there, the kill of all runs', asks).
    if (!this.cold) return undefined;
    const runId = runOfPartition(pk);
    // Only a run's partitions and an effect's are ever let go of: no other key is looked for there.
    if (runId === undefined && !crossRunPartition(pk)) return undefined;
    const group = groupOfPartition(pk);
    // A run's partitions are let go of and read back together: its run partition in memory means the group is.
    if (runId !== undefined && this.partitions.has(group)) return undefined;
    const found = this.cold.get(group);
    if (!found) return undefined;
    const byPk = new Map<string, [string, Item, Span][]>();
    for (const [sk, item, span] of readColdItems(this.lines(), this.sealer, found.items)) {
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
  protected warmAll(): void {
    if (!this.cold) return;
    // Not `partition`: that lets go of the least recently used again; all of them stay until the caller is done.
    for (const { group } of [...this.cold.groups()]) if (!this.partitions.has(group)) this.warm(group);
    this.startColdAgain();
  }

  /** An empty cold store, and so no run listed from it: what is let go of next is noted afresh. */
  protected startColdAgain(): void {
    this.cold = ColdStore.create(this.cold!.dir, this.sealer);
    this.listed = { runs: [], limit: this.listed.limit, complete: true };
    for (const partition of this.partitions.values()) partition.noted = false;
  }

  /** Compacts when the log holds more than `ratio` times the `liveBytes` of its live state (and at least `minBytes`). */
  protected compactIfLarge(liveBytes: number, threshold: { ratio: number; minBytes: number }, onNote: (note: string) => void): void {
    if (!this.log || this.log.bytes < threshold.minBytes || this.log.bytes <= threshold.ratio * liveBytes) return;
    const before = this.log.bytes;
    this.rewriteLive();
    onNote(`${this.log.path}: compacted ${before} bytes of log to ${this.log.bytes} bytes of live state`);
  }

  /** Replaces the log by the live state (compaction, prune): what was let go of is read back first, or it would be lost. */
  protected rewriteLive(): void {
    this.warmAll();
    const { lines, tip, keys } = liveLines(this.partitions, this.sealer);
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
export interface Listed {
  readonly createdAt: string;
  readonly read: () => Item | undefined;
}

/** A run partition in memory, to list. */
export const heldRun = ([pk, partition]: [string, Partition]): [string, Listed] => [pk, { createdAt: partition.createdAt!, read: () => partition.runItem() }];

const RUN_PREFIX = runKey('').pk;

/**
 * Two run partitions (`RUN#<runId>`, by the creation time each keeps) in the one order of runs,
 * newest first (records/run-order.ts `newestFirst`: runs of one instant by run id, as `listRuns`
 * and the runs API order them).
 */
export function newestListed(a: { readonly pk: string; readonly createdAt: string }, b: { readonly pk: string; readonly createdAt: string }): number {
  return newestFirst({ createdAt: a.createdAt, runId: a.pk.slice(RUN_PREFIX.length) }, { createdAt: b.createdAt, runId: b.pk.slice(RUN_PREFIX.length) });
}

/** A finished run let go of from memory, in the list of the newest of them: its run record's line. */
export interface ListedRun {
  readonly pk: string;
  readonly createdAt: string;
  readonly item: ColdItem;
}

/** The run records of the runs to list; one that fails its checks named to `onDamaged`, or thrown without it. */
export function runRecords(listed: [string, Listed][], { onDamaged }: DamagedRunOptions): RunRecord[] {
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

/**
 * An item of a ledger with no log (`storeInMemory`): unsealed, its text written when first asked
 * for (a prune's digest), not on every write. Its record is never changed, so the text is the
 * record's. A class, not an object literal with a getter: the literal made an accessor and a
 * closure for every write.
 */
class UnsealedItem implements Item {
  #json: string | undefined;
  readonly seal = '';

  constructor(
    readonly record: unknown,
    readonly hidden: Hidden,
  ) {}

  get json(): string {
    return (this.#json ??= JSON.stringify(this.record));
  }
}
