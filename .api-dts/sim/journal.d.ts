import type { z } from 'zod';
/**
 * The append-only JSON-lines journal a simulated provider commits to before it answers (so a lost
 * response still means the side effect happened), replayed when the provider starts again.
 *
 * Each entry is one `write` ending in a newline, so a last line without its newline is a write
 * torn by a crash: its response was never sent, so it never happened. It is cut off the file (as a
 * write-ahead log recovers its tail) and reported — left in place, the next append would land on
 * the fragment and make a corrupt line in the middle, which is refused, naming the file and line.
 */
export interface Journal<Entry> {
    /**
     * Every entry in the file, read when asked: those appended since opening included, by this
     * journal or by another process on the same file (a killed engine's provider, a test counting).
     */
    readonly entries: readonly Entry[];
    /** What opening had to repair (a torn last line), for the operator; undefined when nothing. */
    readonly recovered?: string;
    append(entry: Entry): void;
    close(): void;
}
/** Opens the journal at `dataFile`, or an in-memory one when there is no file. */
export declare function openJournal<S extends z.ZodType>(dataFile: string | undefined, schema: S): Journal<z.output<S>>;
/**
 * Truncates a torn last line (the bytes after the last newline) away and says what it dropped;
 * undefined when the journal ends cleanly.
 */
export declare function recoverTornTail(dataFile: string): string | undefined;
