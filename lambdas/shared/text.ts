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
export function clip(text: string, limit: number, kept = limit - 1): string {
  return text.length <= limit ? text : `${text.slice(0, kept)}…`;
}

/**
 * Orders two strings by their UTF-16 code units, as `<` does. For ISO 8601 timestamps of one format
 * (`Date.prototype.toISOString`: every `createdAt` and `decideBy` the ledger writes) that is the
 * order of the instants, and `localeCompare`'s, without ICU's collator: its first use in a process
 * costs about 14 ms (`savepoint runs` paid it sorting 150 runs; against one run it compared none).
 *
 * @example
 * ['2026-12-03T10:00:00.000Z', '2026-12-02T23:59:59.999Z'].sort(byCodeUnits) // → oldest first
 */
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `1 tool call`, `2 tool calls`: a count with its noun, singular for one. */
export function counted(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/**
 * A value as an error message shows what was given instead of what was expected, the one wording
 * for every check of input from outside (defineAgent, the construct's props, the testing kit): a
 * string quoted (`"5"` is not read as 5, nor `""` as nothing) and cut at 80 characters, an object
 * by its first keys (a module's namespace given for its default export shows its exports), an
 * array by its length, a function as one (not its source), anything else as it prints.
 *
 * @example
 * shownValue('0.5')                                // → '"0.5"'
 * shownValue(undefined)                            // → 'undefined'
 * shownValue({ default: agent, saved: new Map() }) // → 'an object with default, saved'
 * shownValue(['a', 'b'])                           // → 'an array of 2 items'
 */
export function shownValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(clip(value, 80));
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return `an array of ${counted(value.length, 'item')}`;
  if (typeof value === 'object' && value !== null) return `an object with ${Object.keys(value).slice(0, 5).join(', ') || 'no keys'}`;
  return String(value);
}
