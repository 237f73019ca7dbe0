import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Span } from './append-log.js';
import { COLD_DIR, type ColdItem } from './cold-store.js';
import { INDEX_FILE, keyOfLine, lineHash, refreshIndex, type IndexedPartition, type LedgerIndex, type RefreshOptions } from './ledger-index.js';
import { LockFile } from './lock-file.js';
import { item, type Partition } from './embedded-memory.js';
import type { Key } from './protocol.js';
import { chained, line, LogHead, parseEntry, splitChained, verifySeal, type Item } from './sealed-log.js';
import { hmacSealer, readOrCreateKeyFile, recordOf, SEAL_KEY_BYTES, SEAL_KEY_FILE, type LedgerSealer } from './seal.js';
import { LedgerIntegrityError } from '../shared/errors.js';

/**
 * The embedded ledger's files in its directory: the lock, the seal key, the head, the log and its
 * index (opened and refused together, `openLedgerDir`), and the lines of the log read back, each
 * checked against what recorded it (the index, the cold store) and against its seal.
 */

export { SEAL_KEY_FILE } from './seal.js';
/** The log in a ledger directory. */
export const LOG_FILE = 'ledger.jsonl';

/** Where a log's lines are read from: the log appended to, or a reader of it. */
export type LineSource = { readonly path: string; readLine(span: Span): string };

/** What recorded a line elsewhere (the index, the cold store): the key recorded at a span, and whether the line's text is the one recorded. */
type Recorded = { where: string; at: (span: Span) => Key | undefined; is: (span: Span, text: string) => boolean };

/** A ledger directory opened: its lock held, its seal key read (or made), its head, and its index brought up to date. */
export interface LedgerDir {
  readonly lock: LockFile;
  readonly sealer: LedgerSealer;
  readonly head: LogHead;
  readonly index: LedgerIndex;
  readonly logPath: string;
  /** Closes the head and releases the lock (a ledger that failed to open). */
  release(): void;
}

/**
 * Opens the files of a ledger directory (`create`: made if needed): the lock, the seal key (made
 * on first use, unless a sealer is given), the head; refuses a log that is gone while its head or
 * key shows it existed, and a damaged one — before the file is touched, so it is left exactly as
 * it was found — and brings the index up to date (`refresh`).
 */
export function openLedgerDir(
  dir: string,
  options: { sealer?: LedgerSealer; command?: string; onNote: (note: string) => void; create: boolean; fsync?: boolean },
  refresh: RefreshOptions,
): LedgerDir {
  if (options.create) mkdirSync(dir, { recursive: true });
  const lock = LockFile.acquire(join(dir, 'ledger.lock'), options.onNote, options.command);
  let head: LogHead | undefined;
  try {
    const logPath = join(dir, LOG_FILE);
    const keyPath = join(dir, SEAL_KEY_FILE);
    // A ledger that was kept here and is gone must not start over as if nothing happened: its
    // head, or the seal key made with it, is the evidence that it existed.
    const keyExisted = existsSync(keyPath);
    head = LogHead.open(join(dir, 'ledger.head'), { fsync: options.fsync ?? false });
    const sealer = options.sealer ?? hmacSealer(sealKeyOf(keyPath, head, logPath));
    refuseMissingLog(logPath, head, keyExisted && options.sealer === undefined, dir);
    const index = refreshIndex(logPath, join(dir, INDEX_FILE), sealer, head, refresh);
    const opened = head;
    return {
      lock,
      sealer,
      head,
      index,
      logPath,
      release: () => {
        opened.close();
        lock.release();
      },
    };
  } catch (error) {
    head?.close();
    lock.release();
    throw error;
  }
}

/**
 * The seal key of a ledger directory, made on first use. The converse of `refuseMissingLog`: a
 * key that is gone while the head or the log shows lines sealed with it is refused, naming it, and
 * not made anew. A new key verifies none of those lines (every command then blamed the index, and
 * once it was removed the log's first line, as forged), and it would sit where the user's backup
 * of the right key has to go. A key file that is not a whole key (cut short, emptied, a directory)
 * is named for the same reason, rather than as an unnamed length or EISDIR.
 */
function sealKeyOf(keyPath: string, head: LogHead, logPath: string): Buffer {
  const restore = 'restore it from a backup of the state directory (nothing was changed), or start over in a new --state-dir';
  if (!existsSync(keyPath)) {
    const sealed = head.lines > 0 ? `${head.path} records ${head.lines} lines sealed with it` : existsSync(logPath) && statSync(logPath).size > 0 ? `${logPath} holds lines sealed with it` : undefined;
    if (sealed) throw new LedgerIntegrityError({ record: keyPath }, `the file is missing, but ${sealed}, which a new key would not verify: ${restore}`);
    return readOrCreateKeyFile(keyPath);
  }
  let key: Buffer;
  try {
    key = readFileSync(keyPath);
  } catch (error) {
    throw new LedgerIntegrityError({ record: keyPath }, `the file cannot be read as the ledger's seal key (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): ${restore}`);
  }
  if (key.length < SEAL_KEY_BYTES) throw new LedgerIntegrityError({ record: keyPath }, `the file holds ${key.length} bytes, not a ${SEAL_KEY_BYTES}-byte seal key (cut short): ${restore}`);
  return key;
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

/**
 * The items of an evicted partition, read back from its lines in the log, each line's seal
 * checked again; and first, when the lines were recorded elsewhere (the index, the cold store),
 * that each is the line recorded there: `recorded` gives the key recorded at a span, and whether
 * the line's text is the one recorded.
 */
export function readLines(source: LineSource, sealer: LedgerSealer, spans: readonly Span[], recorded?: Recorded): [string, Item, Span][] {
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
    const read = item(entry.record, entry.hidden ?? {}, entry.seal);
    verifySeal(entry, sealer, read.json);
    return [entry.sk, read, span];
  });
}

/** The lines of an indexed partition: each must hash to what the index recorded at its place. */
export function readIndexed(source: LineSource, sealer: LedgerSealer, spans: readonly Span[], index: IndexedPartition | undefined): [string, Item, Span][] {
  const byOffset = new Map([...(index?.items.values() ?? [])].map((item) => [item.offset, item]));
  return readLines(source, sealer, spans, {
    where: INDEX_FILE,
    at: (span) => byOffset.get(span.offset),
    is: (span, text) => byOffset.get(span.offset)!.bytes === span.bytes && lineHash(text) === byOffset.get(span.offset)!.hash,
  });
}

/** The lines the cold store noted: each must carry the key and the seal noted at its place. */
export function readColdItems(source: LineSource, sealer: LedgerSealer, items: readonly ColdItem[]): [string, Item, Span][] {
  const byOffset = new Map(items.map((item) => [item.offset, item]));
  return readLines(source, sealer, items, {
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

/** The live state as log lines, chained from the start. */
export function liveLines(partitions: ReadonlyMap<string, Partition>, sealer: LedgerSealer): { lines: string[]; bytes: number; tip: string; keys: Key[] } {
  const lines: string[] = [];
  const keys: Key[] = [];
  let bytes = 0;
  let tip = '';
  for (const [pk, partition] of partitions) {
    for (const [sk, stored] of partition.items) {
      keys.push({ pk, sk });
      const body = line({ pk, sk }, stored);
      tip = sealer.chain(tip, body);
      const text = chained(body, tip);
      lines.push(text);
      bytes += Buffer.byteLength(text) + 1;
    }
  }
  return { lines, bytes, tip, keys };
}
