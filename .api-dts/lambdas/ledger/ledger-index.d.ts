import { LogReader, type Span } from './append-log.js';
import type { Key } from './protocol.js';
import { type LogHead } from './sealed-log.js';
import type { LedgerSealer } from './seal.js';
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
export declare const INDEX_FILE = "ledger.index";
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
export declare function lineHash(text: string): string;
/** A log line's key, read from its start (every line begins with it: sealed-log.ts `line`). */
export declare function keyOfLine(text: string): Key | undefined;
export declare class LedgerIndex {
    /**
     * The partitions, each parsed when first asked for (`partition`): until then, its line of the
     * index file as read, so that a reader of one run parses one line, not the whole index.
     */
    private readonly byPk;
    /** The run partitions' status and creation time (what listing the runs reads), by pk. */
    readonly runs: Map<string, {
        status: string;
        createdAt: string;
    }>;
    /** The pending approvals, by `pk|sk`. */
    readonly pending: Map<string, Key>;
    /** approvalId → the approval's key. */
    readonly approvals: Map<string, Key>;
    log: Checkpoint;
    /** The partitions' keys, in the order they first appeared in the log. */
    partitionKeys(): IterableIterator<string>;
    /**
     * The items of partition `pk`, parsed from its line of the index file each time they are asked
     * for (a reader that goes through every run, `verify --all`, keeps none of them).
     */
    partition(pk: string): IndexedPartition | undefined;
    /** The bytes the live items' lines take (with their newlines): what a compaction would leave. */
    liveBytes(): number;
    /** Takes the log line `text` at `span` (the next one after the checkpoint, its chain checked) into the index. */
    add(text: string, span: Span, key: Key, chain: {
        tip: string;
        previousTip: string;
    }): void;
    /** Whether the index is a checkpoint of the log `reader` reads: its last line is where it was, ending in the same chain. */
    belongsTo(reader: LogReader | undefined): boolean;
    /**
     * The index as its file holds it: a header line (the checkpoint, the runs, the approval
     * indexes), a line per partition (a partition not parsed since it was read is written back as
     * it was), then the MAC of all the lines before it.
     */
    serialize(sealer: LedgerSealer): string;
    /** The index in the file at `path`; undefined when there is none (or it is of another version); refused by name when its MAC fails. */
    static read(path: string, sealer: LedgerSealer): LedgerIndex | undefined;
    /** Writes the index whole (a temp file, synced, renamed over the old one), readable by its owner only. */
    write(path: string, sealer: LedgerSealer): void;
}
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
export declare function refreshIndex(logPath: string, indexPath: string, sealer: LedgerSealer, head: LogHead, options?: RefreshOptions): LedgerIndex;
export {};
