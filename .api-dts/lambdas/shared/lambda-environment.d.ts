/** What a value CloudFormation resolves at deploy counts as, in characters. */
export declare const RESOLVED_REFERENCE_CHARS = 128;
/** The variables as Lambda measures them, in UTF-8 bytes (unresolved values as {@link RESOLVED_REFERENCE_CHARS} characters). */
export declare function environmentBytes(variables: Readonly<Record<string, unknown>>): number;
/**
 * Why Lambda would refuse these variables — their size, the limit and the largest of them, what to
 * move to a parameter, a secret or the agent's code — or undefined when they fit.
 */
export declare function environmentOverLimit(variables: Readonly<Record<string, unknown>>): string | undefined;
