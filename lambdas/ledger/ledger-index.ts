import { hash } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { fileSync } from './file-sync.js';
import { LedgerIntegrityError } from '../shared/errors.js';
import { sameSecret } from '../shared/same-secret.js';
import { AppendLog, LogReader, type Span } from './append-log.js';
import type { Key } from './protocol.js';
import { ChainCheck, parseEntry, splitChained, verifySeal, type LogHead } from './sealed-log.js';
import type { LedgerSealer } from './seal.js';
import { readingFile } from '../shared/file-errors.js';

/**
 * The embedded ledger's index, `ledger.index` beside its log: a sealed checkpoint of the log's
 * live state, so that a command which reads a few records (`status`, `runs`, `approvals`, the
 * console) reads those lines and the lines written since, not the whole log.
 *
 * It holds, as of the log's first `lines` lines (`bytes` bytes, ending in chain `tip`):
 *   - for each partition, where each live item's line is (offset, length) and the sha256 of the
 *     line's exact bytes; for a run's partition, the run's status and creation time;
 *   - the pending approvals' keys and every approval id's key (the two approval indexes).
 * and one MAC over all of it under the ledger's chain key (LedgerSealer.chain, its own domain).
 *
 *   open to read ─► index MAC ok? ─► its last line still ends in `tip`? ─► chain-check the lines after it ─► head ok?
 *                      │ no: damaged, refused by name          │ no: a compaction or prune rewrote the log since: rebuilt from the whole log
 *
 * What each check stands for: a record handed out is read from its line, whose bytes must hash to
 * what the index recorded (so an altered, swapped or replayed older line is refused, naming the
 * line), and whose seal must verify; the lines after the checkpoint are chain-checked from its
 * tip, and the whole against `ledger.head` (so a truncated or extended log is refused as a full
 * open refuses it). A line of another run that is never read is not checked here: that is
 * `savepoint verify --all`'s job (it streams the whole log, every chain and seal). Tampering with
 * the index itself fails its MAC, and is refused naming the file: removing it makes the next read
 * rebuild it from the log, every chain checked.
 *
 * Whoever holds the ledger's lock keeps the index current: a reader that found lines past the
 * checkpoint, and the ledger that wrote them when it closes (EmbeddedLedger.close).
 */
export const INDEX_FILE = 'ledger.index';

/** One live item: its key, where its line is in the log, and the sha256 of the line. */
export interface IndexedItem extends Key, Span {
  readonly hash: string;
}

export interface IndexedPartition {
  readonly items: Map<string, IndexedItem>;
}

/** Where the index is in the log: the lines it covers, their bytes, the chain of the last one and of the one before, and the last one's span. */
interface Checkpoint {
  lines: number;
  bytes: number;
  tip: string;
  previousTip: string;
  last?: Span;
}

const VERSION = 2;
/** The MAC's domain: no log line's chain (a base64url MAC, or '') and no head (`head …`) is this. */
const MAC_DOMAIN = 'savepoint ledger index v1';
const KEY = /^\{"pk":("(?:[^"\\]|\\.)*"),"sk":("(?:[^"\\]|\\.)*"),"record":/;
const RUN_SK = 'RUN';

/** A line's SHA-256, in one call (same-secret.ts `digest`: a Hash object per line cost ~3 times as much). */
export function lineHash(text: string): string {
  return hash('sha256', text, 'base64url');
}

/** A log line's key, read from its start (every line begins with it: sealed-log.ts `line`). */
export function keyOfLine(text: string): Key | undefined {
  const match = KEY.exec(text);
  return match ? { pk: JSON.parse(match[1]!) as string, sk: JSON.parse(match[2]!) as string } : undefined;
}

export class LedgerIndex {
  /**
   * The partitions, each parsed when first asked for (`partition`): until then, its line of the
   * index file as read, so that a reader of one run parses one line, not the whole index.
   */
  private readonly byPk = new Map<string, IndexedPartition | string>();
  /** The run partitions' status and creation time (what listing the runs reads), by pk. */
  readonly runs = new Map<string, { status: string; createdAt: string }>();
  /** The pending approvals, by `pk|sk`. */
  readonly pending = new Map<string, Key>();
  /** approvalId → the approval's key. */
  readonly approvals = new Map<string, Key>();
  log: Checkpoint = { lines: 0, bytes: 0, tip: '', previousTip: '' };

  /** The partitions' keys, in the order they first appeared in the log. */
  partitionKeys(): IterableIterator<string> {
    return this.byPk.keys();
  }

  /**
   * The items of partition `pk`, parsed from its line of the index file each time they are asked
   * for (a reader that goes through every run, `verify --all`, keeps none of them).
   */
  partition(pk: string): IndexedPartition | undefined {
    const found = this.byPk.get(pk);
    if (typeof found !== 'string') return found;
    const [, items] = JSON.parse(found) as SerializedPartition;
    return { items: new Map(items.map(([sk, offset, bytes, hash]) => [sk, { pk, sk, offset, bytes, hash }])) };
  }

  /** The bytes the live items' lines take (with their newlines): what a compaction would leave. */
  liveBytes(): number {
    let bytes = 0;
    for (const pk of this.byPk.keys()) for (const item of this.partition(pk)!.items.values()) bytes += item.bytes + 1;
    return bytes;
  }

  /** Takes the log line `text` at `span` (the next one after the checkpoint, its chain checked) into the index. */
  add(text: string, span: Span, key: Key, chain: { tip: string; previousTip: string }): void {
    let partition = this.partition(key.pk);
    if (!partition) partition = { items: new Map() };
    this.byPk.set(key.pk, partition);
    partition.items.set(key.sk, { pk: key.pk, sk: key.sk, offset: span.offset, bytes: span.bytes, hash: lineHash(text) });
    // Only the lines that can touch the approval indexes or a run's status are parsed (a false
    // positive of these tests only costs a parse).
    const run = key.sk === RUN_SK && key.pk.startsWith('RUN#');
    if (run || text.includes('"approvalId"') || text.includes('"pendingApproval"')) {
      const { record, hidden } = JSON.parse(text) as { record: Record<string, unknown>; hidden?: { pendingApproval?: boolean } };
      if (run) this.runs.set(key.pk, { status: String(record['status']), createdAt: String(record['createdAt']) });
      if (typeof record['approvalId'] === 'string') this.approvals.set(record['approvalId'], key);
      const id = `${key.pk}|${key.sk}`;
      if (hidden?.pendingApproval === true) this.pending.set(id, key);
      else this.pending.delete(id);
    } else this.pending.delete(`${key.pk}|${key.sk}`);
    this.log = { lines: this.log.lines + 1, bytes: span.offset + span.bytes + 1, tip: chain.tip, previousTip: chain.previousTip, last: span };
  }

  /** Whether the index is a checkpoint of the log `reader` reads: its last line is where it was, ending in the same chain. */
  belongsTo(reader: LogReader | undefined): boolean {
    const { lines, bytes, tip, last } = this.log;
    if (lines === 0) return true;
    if (!reader || !last || reader.bytes < bytes || last.offset + last.bytes + 1 !== bytes) return false;
    return splitChained(reader.readLine(last))?.chain === tip;
  }

  /**
   * The index as its file holds it: a header line (the checkpoint, the runs, the approval
   * indexes), a line per partition (a partition not parsed since it was read is written back as
   * it was), then the MAC of all the lines before it.
   */
  serialize(sealer: LedgerSealer): string {
    const { last, ...log } = this.log;
    const header = JSON.stringify({
      v: VERSION,
      log: { ...log, ...(last && { last: [last.offset, last.bytes] }) },
      runs: [...this.runs].map(([pk, { status, createdAt }]) => [pk, status, createdAt]),
      pending: [...this.pending.values()].map(({ pk, sk }) => [pk, sk]),
      approvals: [...this.approvals].map(([id, { pk, sk }]) => [id, pk, sk]),
    });
    const lines = [header];
    for (const [pk, partition] of this.byPk) {
      lines.push(typeof partition === 'string' ? partition : JSON.stringify([pk, [...partition.items.values()].map(({ sk, offset, bytes, hash }) => [sk, offset, bytes, hash])]));
    }
    const body = lines.join('\n');
    return `${body}\n${sealer.chain(MAC_DOMAIN, body)}\n`;
  }

  /** The index in the file at `path`; undefined when there is none (or it is of another version); refused by name when its MAC fails. */
  static read(path: string, sealer: LedgerSealer): LedgerIndex | undefined {
    if (!existsSync(path)) return undefined;
    const text = readingFile(path, () => readFileSync(path, 'utf8'));
    const cut = text.lastIndexOf('\n', text.length - 2);
    const body = text.slice(0, Math.max(cut, 0));
    const mac = text.slice(cut + 1).trim();
    if (cut < 0 || !sameSecret(mac, sealer.chain(MAC_DOMAIN, body))) {
      throw new LedgerIntegrityError({ record: path }, `its MAC does not match its content (altered, forged or cut short): remove ${path} and the next read rebuilds it from the log, every line checked (savepoint verify --all checks the log itself)`);
    }
    const lines = body.split('\n');
    const header = JSON.parse(lines[0]!) as SerializedHeader;
    if (header.v !== VERSION) return undefined;
    const index = new LedgerIndex();
    const { last, ...log } = header.log;
    index.log = { ...log, ...(last && { last: { offset: last[0], bytes: last[1] } }) };
    for (const [pk, status, createdAt] of header.runs) index.runs.set(pk, { status, createdAt });
    for (const [pk, sk] of header.pending) index.pending.set(`${pk}|${sk}`, { pk, sk });
    for (const [id, pk, sk] of header.approvals) index.approvals.set(id, { pk, sk });
    for (const line of lines.slice(1)) index.byPk.set(JSON.parse(PARTITION_KEY.exec(line)![1]!) as string, line);
    return index;
  }

  /** Writes the index whole (a temp file, synced, renamed over the old one), readable by its owner only. */
  write(path: string, sealer: LedgerSealer): void {
    const draft = `${path}.writing`;
    const fd = openSync(draft, 'w', 0o600);
    try {
      const buffer = Buffer.from(this.serialize(sealer));
      for (let written = 0; written < buffer.length; ) written += writeSync(fd, buffer, written);
      fileSync.full(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(draft, path);
  }
}

/** A partition's line of the index file begins with its key. */
const PARTITION_KEY = /^\[("(?:[^"\\]|\\.)*")/;

interface SerializedHeader {
  v: number;
  log: Omit<Checkpoint, 'last'> & { last?: [number, number] };
  runs: [string, string, string][];
  pending: [string, string][];
  approvals: [string, string, string][];
}
type SerializedPartition = [string, [string, number, number, string][]];

export interface RefreshOptions {
  /**
   * First stream the whole log, whatever the index holds: every line's chain and seal checked
   * (`true`: `savepoint verify`), or every line's chain (`'chain'`: the ledger opened to write; the
   * chain covers each line's exact bytes, and a record's seal is checked when it is read). @default false
   */
  readonly verify?: boolean | 'chain';
}

/**
 * The index of the log at `logPath`, brought up to date: read from `indexPath` (refused by name if
 * damaged), then the lines after its checkpoint chain-checked and taken in (all of them, when
 * there is no index, it is of a log since rewritten, or `verify` is asked), the whole checked
 * against `head`; written back when it changed. The caller holds the ledger's lock.
 */
export function refreshIndex(logPath: string, indexPath: string, sealer: LedgerSealer, head: LogHead, options: RefreshOptions = {}): LedgerIndex {
  const found = LedgerIndex.read(indexPath, sealer);
  if (options.verify) verifyWholeLog(logPath, sealer, head, options.verify === true);
  const reader = existsSync(logPath) ? new LogReader(logPath) : undefined;
  let index: LedgerIndex;
  try {
    index = found?.belongsTo(reader) ? found : new LedgerIndex();
  } finally {
    reader?.close();
  }
  const chain = new ChainCheck(sealer, logPath, index.log);
  let added = 0;
  AppendLog.readLines(
    logPath,
    (text, _at, span) => {
      const key = checkedLine(text, chain, logPath, index.log.lines);
      index.add(text, span, key, chain.position);
      added++;
    },
    { from: index.log.bytes },
  );
  chain.end(head);
  if ((added > 0 || index !== found) && existsSync(logPath)) index.write(indexPath, sealer);
  return index;
}

/** Streams the whole log, every line's chain (and with `seals`, its seal) checked, and the whole against `head`; keeps nothing. */
function verifyWholeLog(logPath: string, sealer: LedgerSealer, head: LogHead, seals: boolean): void {
  const chain = new ChainCheck(sealer, logPath);
  AppendLog.readLines(logPath, (text, at) => {
    checkedLine(text, chain, logPath, at);
    if (!seals) return;
    let entry;
    try {
      entry = parseEntry(JSON.parse(text), text);
    } catch (error) {
      throw new Error(`${logPath}:${at + 1}: corrupt ledger log line (${error instanceof Error ? error.message : String(error)})`, { cause: error });
    }
    verifySeal(entry, sealer);
  });
  chain.end(head);
}

/** A log line's key, its chain checked as the line after the `before` lines `chain` has checked. */
function checkedLine(text: string, chain: ChainCheck, logPath: string, before: number): Key {
  const key = keyOfLine(text);
  const split = splitChained(text);
  if (!key || !split) throw lineProblem(text, logPath, before + 1);
  chain.next(split.body, split.chain, key);
  return key;
}

/** What is wrong with line `number` of the log, which carries no key and chain where a line of the ledger has them: not JSON, not an entry, or not sealed. */
function lineProblem(text: string, logPath: string, number: number): Error {
  try {
    parseEntry(JSON.parse(text), text);
  } catch (error) {
    if (error instanceof LedgerIntegrityError) {
      error.message = error.message.replace('record ', `record ${logPath}:${number} `);
      return error;
    }
    return new Error(`${logPath}:${number}: corrupt ledger log line (${error instanceof Error ? error.message : String(error)})`, { cause: error });
  }
  return new LedgerIntegrityError({ record: `${logPath}:${number}` }, 'the line carries no key, seal and chain (written without the ledger key)');
}
