import type { Ledger } from './ledger.js';

/** A ledger role that counts the calls made through it, by method: what each step costs in round trips. */
export interface CountingLedger<T extends object = Ledger> {
  readonly ledger: T;
  /** Calls so far, by method name. */
  counts(): Record<string, number>;
  total(): number;
  reset(): void;
}

/**
 * Wraps a ledger role (`TurnLedger`, `ToolCallLedger`, …, or the whole `Ledger`, every role at
 * once) from outside (the steps do not know): every method call through it is counted once.
 */
export function countingLedger<T extends object>(ledger: T): CountingLedger<T> {
  const counts = new Map<string, number>();
  // One counting wrapper per method, made on its first use and kept while the method is the same:
  // a new one per call would cost the ledger it measures (and defeat the caches of the decorators
  // outside it, which keep one wrapper per method they are handed: local/aws/iam/dynamodb.ts).
  const wrappers = new Map<string, { method: unknown; wrapper: unknown }>();
  const wrapped = new Proxy(ledger, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      const known = wrappers.get(property);
      if (known?.method === value) return known.wrapper;
      const wrapper = (...args: unknown[]) => {
        counts.set(property, (counts.get(property) ?? 0) + 1);
        return (value as (...args: unknown[]) => unknown).apply(target, args);
      };
      wrappers.set(property, { method: value, wrapper });
      return wrapper;
    },
  });
  return {
    ledger: wrapped,
    counts: () => Object.fromEntries([...counts].sort((a, b) => b[1] - a[1])),
    total: () => [...counts.values()].reduce((sum, count) => sum + count, 0),
    reset: () => counts.clear(),
  };
}
