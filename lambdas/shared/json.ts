/** Whether `value` is a plain object (a JSON object): not null, not an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `JSON.parse(JSON.stringify(value))`, without the text: a copy of plain data (objects, arrays,
 * strings, finite numbers, booleans, null) built node by node, its strings shared (they are
 * immutable), so a large string is not escaped and parsed back. It is the same value the round
 * trip gives — `undefined`, functions and symbols dropped from objects and made `null` in arrays,
 * non-finite numbers `null`, -0 as 0 — and anything else (a `toJSON`, a Date, a Map, a class
 * instance, an own `__proto__` key, a cycle or a tree deeper than COPY_DEPTH) takes the round trip
 * itself, for the whole value, so that its answer or its error is JSON's own.
 */
export function jsonCopy(value: unknown): unknown {
  try {
    return copyNode(value, 0);
  } catch (error) {
    if (error !== NOT_PLAIN) throw error;
    const text = JSON.stringify(value) as string | undefined;
    return text === undefined ? undefined : (JSON.parse(text) as unknown);
  }
}

/** Past this depth the copy takes the round trip (which also answers a cycle with JSON's own error). */
const COPY_DEPTH = 64;
const NOT_PLAIN = Symbol('not plain JSON data');

function copyNode(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value + 0 : null; // + 0 makes -0 the 0 JSON writes
    case 'object':
      break;
    default:
      // undefined, a function, a symbol at the top (their place in a container is handled there), a bigint: JSON's own answer or error.
      throw NOT_PLAIN;
  }
  if (value === null) return null;
  if (depth >= COPY_DEPTH) throw NOT_PLAIN;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype || typeof (value as { toJSON?: unknown }).toJSON === 'function') throw NOT_PLAIN;
    const copy: unknown[] = new Array(value.length);
    for (let index = 0; index < value.length; index++) {
      const element: unknown = value[index];
      copy[index] = element === undefined || typeof element === 'function' || typeof element === 'symbol' ? null : copyNode(element, depth + 1);
    }
    return copy;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if ((prototype !== Object.prototype && prototype !== null) || typeof (value as { toJSON?: unknown }).toJSON === 'function') throw NOT_PLAIN;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (key === '__proto__') throw NOT_PLAIN;
    const field: unknown = (value as Record<string, unknown>)[key];
    if (field === undefined || typeof field === 'function' || typeof field === 'symbol') continue;
    copy[key] = copyNode(field, depth + 1);
  }
  return copy;
}
