import type { Span } from './append-log.js';
import type { Key } from './protocol.js';
import type { LedgerSealer } from './seal.js';
/**
 * Where the embedded ledger on disk keeps track of the partitions it let go of from memory, so
 * that an engine that runs for months holds in memory only what is live (the running runs, the
 * most recently used finished ones), not one entry per run it ever finished.
 *
 * A ledger lets go of a group of partitions at once: a finished run's (its RUN, TOKEN and BLOB
 * partitions), or one business-key effect's (EFFECT#…). The group's records stay where they
 * are, in the log; the store notes where each record's line is and the seal that line carries,
 * and which approval ids the group's records hold. When a record of the group is asked for again,
 * the ledger reads the group back: each line from the log, its seal checked, and checked to be the
 * one the store noted (so that an older line of the same record cannot stand in for it).
 *
 * The store is `ledger.cold/` beside the log: 256 bucket files, a key's bucket the first byte of
 * its sha256, each a list of lines appended as groups are let go of (the last line for a key is
 * current). Each line carries a MAC under the ledger's chain key (its own domain), so that no one
 * without the key can make it point elsewhere. Reading a group reads one bucket: ~1/256 of what
 * the store holds.
 *
 * It is derived, never the record: the process that opens the ledger to write replays the whole
 * log, so it makes the store anew (`create`) and owns it while it holds the ledger's lock. A
 * reader (`EmbeddedLedger.openToRead`) does not use it; it has the sealed index.
 */
export declare const COLD_DIR = "ledger.cold";
/**
 * One record of a group let go of: its key, where its line is in the log, and what identifies that
 * line: the seal it carries, or (noted from the index, which holds no seals) the sha256 of its bytes.
 */
export interface ColdItem extends Key, Span {
    readonly seal: string;
    readonly hash?: string;
}
export interface ColdGroup {
    /** The group's key: `RUN#<runId>` for a run's partitions, the partition's key otherwise. */
    readonly group: string;
    readonly items: readonly ColdItem[];
    /** A run's group: its run record's status and creation time (what listing the runs reads). */
    readonly run?: {
        readonly status: string;
        readonly createdAt: string;
    };
    /** The approval ids its records hold (the byApprovalId index of the records let go of). */
    readonly approvals: readonly string[];
}
export declare class ColdStore {
    readonly dir: string;
    private readonly sealer;
    /**
     * What this process wrote to each bucket file, hashed as it was appended: the store owns its
     * directory while the ledger is open, so a bucket must hold exactly that. A bucket that is gone,
     * cut short, added to or edited is damage, named — never read as "nothing there" (a group that
     * vanished would look like a run that never was, an effect never claimed).
     */
    private readonly written;
    private constructor();
    /** A store in `dir` made anew: whatever an earlier process left there is removed first. */
    static create(dir: string, sealer: LedgerSealer): ColdStore;
    /** Notes `group` as let go of (replacing what the store held for it), and its approval ids. */
    put(group: ColdGroup): void;
    /** Notes each of `groups` as `put` does, with one write per bucket (an open notes every finished run at once). */
    putAll(groups: Iterable<ColdGroup>): void;
    /** The group under `key` as last noted, or undefined when none was let go of. */
    get(key: string): ColdGroup | undefined;
    /** The key of the group that holds approval `approvalId`, or undefined. */
    groupOfApproval(approvalId: string): string | undefined;
    /** Every group the store holds now (each bucket read in turn: time in what it holds, memory in one bucket). */
    groups(): Generator<ColdGroup>;
    /** The last line of `key`'s bucket that starts with one of `prefixes`, its MAC checked. */
    private last;
    private lines;
    /** A bucket's text, checked to be what this process wrote there ('' for a bucket it never wrote). */
    private read;
    private parse;
    private damaged;
    private bucket;
}
