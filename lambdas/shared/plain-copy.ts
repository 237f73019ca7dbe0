/**
 * Copies of plain JSON data made without JSON's text: what `JSON.parse(JSON.stringify(value))`
 * gives, built node by node, or NOT_PLAIN where JSON would change the value (the caller then takes
 * the round trip itself). One walk for the embedded ledger's stored records (ledger/embedded-memory.ts)
 * and the local engine's task payloads (shared/json.ts `jsonCopy`).
 */

/** What `plainCopy` answers for a value that is not plain JSON data. */
export const NOT_PLAIN: unique symbol = Symbol('not plain JSON data');

/** Past this depth `plainCopy` answers NOT_PLAIN: the round trip copies it (and answers a cycle with JSON's own error). */
const COPY_DEPTH = 64;

/** The objects and arrays `plainCopy` made and froze: plain JSON data that never changes. */
const madeFrozen = new WeakSet<object>();
const madeFrozenCopy = <T extends object>(copy: T): T => {
  madeFrozen.add(Object.freeze(copy));
  return copy;
};

/** Whether `plainCopy` made `value` frozen (plain JSON data all through, never changed). */
export const isMadeFrozen = (value: object): boolean => madeFrozen.has(value);

/** Sets `object[key]`, an own "__proto__" key (JSON allows it) kept a key, not made the prototype. */
function setField(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  else object[key] = value;
}

/**
 * `JSON.parse(JSON.stringify(value))` for plain JSON data — plain objects (an undefined field left
 * out, as JSON leaves it), arrays, strings, finite numbers, booleans, null — without parsing (about
 * a third of the parse's time); NOT_PLAIN for anything JSON would change (a Date, a class instance,
 * a function, undefined in an array, NaN, -0, …) or a tree deeper than COPY_DEPTH, which the
 * caller copies through JSON instead.
 * `freeze`: each object and array of the copy frozen as it is made (a store that shares its reads),
 * and one made so before taken as it is: what such a store hands out, written back in a record of
 * its own (a run record with one counter changed), is not copied again.
 */
export function plainCopy(value: unknown, freeze = false, depth = 0): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0) ? value : NOT_PLAIN;
    case 'object': {
      if (value === null) return null;
      if (freeze && madeFrozen.has(value)) return value;
      if (depth >= COPY_DEPTH) return NOT_PLAIN;
      if (Array.isArray(value)) {
        const copy = new Array<unknown>(value.length);
        for (let index = 0; index < value.length; index++) {
          const entry = plainCopy(value[index], freeze, depth + 1);
          if (entry === NOT_PLAIN) return NOT_PLAIN;
          copy[index] = entry;
        }
        return freeze ? madeFrozenCopy(copy) : copy;
      }
      if (Object.getPrototypeOf(value) !== Object.prototype) return NOT_PLAIN;
      const copy: Record<string, unknown> = {};
      for (const key of Object.keys(value)) {
        const field: unknown = (value as Record<string, unknown>)[key];
        if (field === undefined) continue;
        const entry = plainCopy(field, freeze, depth + 1);
        if (entry === NOT_PLAIN) return NOT_PLAIN;
        setField(copy, key, entry);
      }
      return freeze ? madeFrozenCopy(copy) : copy;
    }
    default:
      return NOT_PLAIN;
  }
}

/**
 * `value` with every object in it frozen, children first (so that a frozen object's objects are
 * frozen too, and a walk stops at one frozen already). For data with no cycles (JSON's).
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  for (const field of Object.values(value)) deepFreeze(field);
  return Object.freeze(value);
}
