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

/**
 * The first key given twice in one object of `text` (JSON that parses), as its path (`runId`,
 * `input.lines[2].amount`); undefined when every object names each key once. JSON leaves a
 * repeated key's meaning to the parser (RFC 8259 § 4: names SHOULD be unique): `JSON.parse` keeps
 * the last, others the first, so `{"decision":"approve","decision":"reject"}` is a different
 * request to a proxy or an audit log than to the API. A body that says two things is refused.
 */
export function duplicateKey(text: string): string | undefined {
  // One frame per open object or array: the keys seen (an object's) and where the scan is in it.
  const frames: { keys?: Set<string>; at: string | number; expectsKey: boolean }[] = [];
  const pathTo = (name: string) =>
    [...frames.slice(0, -1).map((frame) => frame.at), name].map((part, index) => (typeof part === 'number' ? `[${part}]` : index === 0 ? part : `.${part}`)).join('');
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (char === '"') {
      let end = index + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const frame = frames.at(-1);
      if (frame?.keys && frame.expectsKey) {
        // Decoded: "a" and "\u0061" are the same key.
        const name = JSON.parse(text.slice(index, end + 1)) as string;
        if (frame.keys.has(name)) return pathTo(name);
        frame.keys.add(name);
        frame.at = name;
        frame.expectsKey = false;
      }
      index = end;
    } else if (char === '{') frames.push({ keys: new Set(), at: '', expectsKey: true });
    else if (char === '[') frames.push({ at: 0, expectsKey: false });
    else if (char === '}' || char === ']') frames.pop();
    else if (char === ',') {
      const frame = frames.at(-1)!;
      if (frame.keys) frame.expectsKey = true;
      else frame.at = (frame.at as number) + 1;
    }
  }
  return undefined;
}
