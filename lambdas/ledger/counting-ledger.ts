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
  const wrapped = new Proxy(ledger, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      return (...args: unknown[]) => {
        counts.set(property, (counts.get(property) ?? 0) + 1);
        return (value as (...args: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return {
    ledger: wrapped,
    counts: () => Object.fromEntries([...counts].sort((a, b) => b[1] - a[1])),
    total: () => [...counts.values()].reduce((sum, count) => sum + count, 0),
    reset: () => counts.clear(),
  };
}
