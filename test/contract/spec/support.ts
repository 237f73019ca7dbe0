import { afterEach, beforeEach } from 'vitest';
import type { Ledger } from '../../../lambdas/ledger/ledger.js';

/** A ledger for one test, and how to dispose of it. */
export interface LedgerUnderTest {
  ledger: Ledger;
  close?: () => void | Promise<void>;
  /**
   * Damages the backing store behind the ledger's back (the items of one run, as stored: record
   * attributes and seal, by sort key; delete a key to lose the record) and returns the ledger to
   * read it with (reopened, for a ledger that reads its store when it opens). Absent for a ledger
   * whose store is only its own memory.
   */
  damage?: (runId: string, edit: (items: Map<string, Record<string, unknown>>) => void) => Promise<Ledger>;
  /**
   * The items of a partition as the backing store holds them (DynamoDB: the table's; on disk: the
   * log's lines), to check what a prune left. Absent for a ledger whose store is only its own memory.
   */
  stored?: (pk: string) => Promise<unknown[]>;
  /** A second ledger on the same store (another Lambda on the table), with nothing read yet. */
  another?: () => Ledger | Promise<Ledger>;
}

/** Makes a fresh, empty ledger for one test (a backend's driver). */
export type MakeLedger = () => Promise<LedgerUnderTest>;

/**
 * A fresh ledger for each test of the enclosing `describe`, closed after it. `ledger` and `under`
 * stand for the current test's (they forward to it), so that a spec reads like a plain test.
 */
export function useLedger(make: MakeLedger): { ledger: Ledger; under: LedgerUnderTest } {
  let current: LedgerUnderTest | undefined;
  beforeEach(async () => {
    current = await make();
  });
  afterEach(async () => {
    await current?.close?.();
    current = undefined;
  });
  const now = (): LedgerUnderTest => {
    if (!current) throw new Error('the ledger under test is used outside a test');
    return current;
  };
  const forward = <T extends object>(target: () => T) =>
    new Proxy({} as T, {
      get: (_, property) => {
        const value: unknown = Reflect.get(target(), property);
        return typeof value === 'function' ? value.bind(target()) : value;
      },
    });
  return { ledger: forward(() => now().ledger), under: forward(now) };
}

/** Either what `check` found (the problems it reports) or the error reading the damaged ledger raised. */
export async function afterDamage(under: LedgerUnderTest, edit: (items: Map<string, Record<string, unknown>>) => void, check: (ledger: Ledger) => Promise<string>): Promise<string> {
  try {
    return await check(await under.damage!('r1', edit));
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}
