/**
 * A mistake in what the user asked for — a bad option or file, a state directory that cannot be
 * used — told in one sentence. The CLI exits 2 for it, as it does for invalid input.
 */
export declare class UsageError extends Error {
    readonly name = "UsageError";
}
/** An fs error as the end of a sentence. */
export declare function describe(error: unknown): string;
