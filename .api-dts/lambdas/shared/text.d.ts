/**
 * `text` cut short for a message: as it is when at most `limit` characters, else its first `kept`
 * characters and an ellipsis. `kept` is `limit - 1` unless given, so the result is at most `limit`
 * long; the callers that keep another count (the loop guard, replay's divergence) keep the messages
 * they have always written, which recorded runs compare byte for byte.
 *
 * @example
 * clip('abcdef', 4)        // → 'abc…'
 * clip('abcdef', 4, 4)     // → 'abcd…'
 * clip('abcd', 4)          // → 'abcd'
 */
export declare function clip(text: string, limit: number, kept?: number): string;
