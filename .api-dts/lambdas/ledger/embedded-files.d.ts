import type { Span } from './append-log.js';
import { type ColdItem } from './cold-store.js';
import { type IndexedPartition, type LedgerIndex, type RefreshOptions } from './ledger-index.js';
import { LockFile } from './lock-file.js';
import { type Partition } from './embedded-memory.js';
import type { Key } from './protocol.js';
import { LogHead, type Item } from './sealed-log.js';
import { type LedgerSealer } from './seal.js';
/**
 * The embedded ledger's files in its directory: the lock, the seal key, the head, the log and its
 * index (opened and refused together, `openLedgerDir`), and the lines of the log read back, each
 * checked against what recorded it (the index, the cold store) and against its seal.
 */
/** The seal key's file in a state directory (`keys/`, like the approval keys). */
export declare const SEAL_KEY_FILE = "keys/ledger-seal.key";
/** The log in a ledger directory. */
export declare const LOG_FILE = "ledger.jsonl";
/** Where a log's lines are read from: the log appended to, or a reader of it. */
export type LineSource = {
    readonly path: string;
    readLine(span: Span): string;
};
/** What recorded a line elsewhere (the index, the cold store): the key recorded at a span, and whether the line's text is the one recorded. */
type Recorded = {
    where: string;
    at: (span: Span) => Key | undefined;
    is: (span: Span, text: string) => boolean;
};
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
export declare function openLedgerDir(dir: string, options: {
    sealer?: LedgerSealer;
    onNote: (note: string) => void;
    create: boolean;
}, refresh: RefreshOptions): LedgerDir;
/**
 * The items of an evicted partition, read back from its lines in the log, each line's seal
 * checked again; and first, when the lines were recorded elsewhere (the index, the cold store),
 * that each is the line recorded there: `recorded` gives the key recorded at a span, and whether
 * the line's text is the one recorded.
 */
export declare function readLines(source: LineSource, sealer: LedgerSealer, spans: readonly Span[], recorded?: Recorded): [string, Item, Span][];
/** The lines of an indexed partition: each must hash to what the index recorded at its place. */
export declare function readIndexed(source: LineSource, sealer: LedgerSealer, spans: readonly Span[], index: IndexedPartition | undefined): [string, Item, Span][];
/** The lines the cold store noted: each must carry the key and the seal noted at its place. */
export declare function readColdItems(source: LineSource, sealer: LedgerSealer, items: readonly ColdItem[]): [string, Item, Span][];
/** The live state as log lines, chained from the start. */
export declare function liveLines(partitions: ReadonlyMap<string, Partition>, sealer: LedgerSealer): {
    lines: string[];
    bytes: number;
    tip: string;
    keys: Key[];
};
export {};
