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
export declare function countingLedger<T extends object>(ledger: T): CountingLedger<T>;
