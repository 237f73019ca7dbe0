import type { Key } from './protocol.js';
import type { LedgerSealer } from './seal.js';
/**
 * The embedded ledger's file format: one JSON line per write,
 *
 *   {"pk":…,"sk":…,"record":{…},"hidden":{…},"seal":…,"chain":…}
 *
 * `seal` seals the item (its key, record and hidden attributes, seal.ts); `chain` binds the line to
 * the one before it; `ledger.head` beside the log counts its lines (LogHead).
 */
/** Attributes the DynamoDB ledger keeps on an item but never returns; here, beside the record. */
export interface Hidden {
    /** Step keys counted into a run's counters (countStep). */
    countedSteps?: string[];
    /** Reasons of the guard events recorded on a run (recordGuardEvent). */
    guardReasons?: string[];
    /** In the pending-approvals index (a sparse GSI on DynamoDB). */
    pendingApproval?: true;
}
/**
 * One stored item. `json` is the record as written (what the log holds; like DynamoDB's
 * marshalling, it drops `undefined`); `record` is parsed from it, for the conditions to read. The
 * record is never handed out or changed: every read returns a deep copy.
 */
export interface Item<T = unknown> {
    readonly record: T;
    readonly json: string;
    readonly hidden: Hidden;
    /** The item's seal (over its key, record and hidden attributes). */
    readonly seal: string;
}
export interface LogEntry extends Key {
    record: unknown;
    hidden?: Hidden;
    seal: string;
    /** The log chain: MAC of this line (without `chain`) and the chain of the line before it. */
    chain: string;
}
/** Checks an entry's item seal (its key, record and hidden attributes). */
export declare function verifySeal(entry: LogEntry, sealer: LedgerSealer): void;
/**
 * The log's chain, checked one line at a time (`next`), then against its head (`end`), over every
 * line's text (the chain covers each line's exact bytes, so a line that is not parsed is still checked).
 */
export declare class ChainCheck {
    private readonly sealer;
    private readonly path;
    private lines;
    private tip;
    private previousTip;
    /** `from`: the log's first `lines` lines are taken as checked already, ending in `tip` (a checkpoint: ledger-index.ts). */
    constructor(sealer: LedgerSealer, path: string, from?: {
        lines: number;
        tip: string;
        previousTip: string;
    });
    /** Where the check is: the lines checked, the chain of the last one and of the one before it. */
    get position(): {
        lines: number;
        tip: string;
        previousTip: string;
    };
    next(body: string, chain: string, key: Key): void;
    /** Checks the lines read against `head`; returns the chain's tip. */
    end(head: LogHead): string;
}
/** A line's text split as the chain reads it: the body it covers, and its chain MAC (the last field). */
export declare function splitChained(text: string): {
    body: string;
    chain: string;
} | undefined;
export declare function line(key: Key, stored: Item): string;
/** A line with its chain MAC as the last field (so that the chained body is the line's own text). */
export declare function chained(body: string, chain: string): string;
export declare function parseEntry(value: unknown, text: string): LogEntry;
/**
 * The log's head, `ledger.head` beside it: how many lines the log holds and the chain of the last
 * one, MACed. Rewritten in place after every append (one small write at offset 0); without it, a
 * log cut at a line boundary would replay as a shorter, valid-looking history.
 */
export declare class LogHead {
    readonly path: string;
    /** Opened on the first write: a ledger refused on open leaves no head behind. */
    private fd;
    readonly existed: boolean;
    private state;
    private constructor();
    static open(path: string): LogHead;
    get lines(): number;
    /** Whether the head must be rewritten for a log of `lines` lines ending in `chain` (new, one line behind, or mid-compaction). */
    needsWrite(lines: number, chain: string, sealer: LedgerSealer): boolean;
    /** Whether the log's chain after `lines` lines is what the head (or, mid-compaction, its previous log) records. */
    matches(lines: number, chain: string, sealer: LedgerSealer): boolean;
    write(lines: number, chain: string, sealer: LedgerSealer, previous?: {
        lines: number;
        chain: string;
    }): void;
    close(): void;
}
