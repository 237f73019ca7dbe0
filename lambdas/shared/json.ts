import { NOT_PLAIN, plainCopy } from './plain-copy.js';

/** Whether `value` is a plain object (a JSON object): not null, not an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `JSON.parse(JSON.stringify(value))`, without the text where the value is plain JSON data
 * (`plainCopy`: its strings shared, so a large string is not escaped and parsed back); anything
 * else — a `toJSON`, a Date, -0, an undefined field in an array, a cycle — takes the round trip
 * itself, for the whole value, so that its answer or its error is JSON's own.
 */
export function jsonCopy(value: unknown): unknown {
  const copy = plainCopy(value);
  if (copy !== NOT_PLAIN) return copy;
  const text = JSON.stringify(value) as string | undefined;
  return text === undefined ? undefined : (JSON.parse(text) as unknown);
}
