/** Where a line is in the log file: its first byte, and its length without the newline. */
export interface Span {
    readonly offset: number;
    readonly bytes: number;
}
export interface AppendLogOptions {
    /**
     * fdatasync after every append. Off by default, by measurement: an append is ~7 µs, an
     * fdatasync ~0.3–0.4 ms on this machine's ext4 disk, and an agent step makes ~5 writes, so
     * syncing each would take most of the 2 ms step budget. Without it, a crash of the process
     * loses nothing acknowledged (the write is in the kernel's page cache when `append` returns);
     * a crash of the OS or a power loss can lose the last few seconds of writes, the same trade
     * the on-disk dynalite (LevelDB, unsynced writes) makes.
     */
    readonly fsync?: boolean;
    /** Where notes go (a torn last line dropped, a compaction). */
    readonly onNote?: (note: string) => void;
}
/**
 * An append-only log of JSON lines, one per committed write. Its lines are read by whoever opens
 * it (`readLines`, streaming; `readLine`, one at a span), and checked there (ledger-index.ts).
 *
 * A line is acknowledged only once `append` returned, i.e. once its closing newline is written.
 * So bytes after the last newline are a line torn by a crash mid-append: never acknowledged, not
 * read, and cut (with a note) when the log is opened to append.
 */
export declare class AppendLog<T> {
    readonly path: string;
    private fd;
    /** Bytes in the file: where the next line starts, and where a failed append is cut back to. */
    private size;
    /** Complete lines in the file. */
    private count;
    private readonly options;
    /** Set when a failed append could not be undone: the file's tail is unknown, so no more writes. */
    private broken?;
    private constructor();
    /** A read-only descriptor of the file, for `readLine` (the append descriptor cannot read). */
    private reader?;
    /**
     * Opens the log to append after its first `lines` complete lines (`bytes` bytes, what a reader of
     * the whole file found: `readLines`), reading none of them. Bytes after them are a line torn by a
     * crash mid-append: cut, with a note.
     */
    static openToAppend<T>(path: string, end: {
        lines: number;
        bytes: number;
    }, options?: AppendLogOptions): AppendLog<T>;
    /**
     * Reads the complete lines of the log at `path` one at a time, from byte `from` (a line's start)
     * on, without opening it for writing or holding it in memory (a reader that keeps only some lines
     * reads in memory flat in the file's size). Bytes after the last newline (a torn line) are left
     * as they are and not passed on. Returns the number of complete lines read.
     */
    static readLines(path: string, onLine: (text: string, index: number, span: Span) => void, options?: {
        from?: number;
        chunkBytes?: number;
    }): number;
    get bytes(): number;
    get lines(): number;
    /** Appends one line (JSON text without a newline); when this returns, the line survives a crash of the process. Returns where it is. */
    append(json: string): Span;
    /** The line at `span` (from `open`, `append` or `rewrite`), read back from the file. */
    readLine(span: Span): string;
    /**
     * Replaces the log by `lines` (the live state), atomically: written to a temp file, fsynced,
     * renamed over the log, and the directory fsynced. A crash at any point leaves either the old
     * log or the new one.
     */
    rewrite(lines: Iterable<string>): Span[];
    close(): void;
}
/** Reads lines of a log by where they are (`Span`), without opening it for writing: what a reader of an index needs. */
export declare class LogReader {
    readonly path: string;
    private readonly fd;
    constructor(path: string);
    /** The file's size in bytes. */
    get bytes(): number;
    readLine(span: Span): string;
    close(): void;
}
