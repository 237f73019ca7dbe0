import type { Ledger } from './ledger.js';
import type { PruneRecord } from './protocol.js';

/** What `prune` and `verify` use of a ledger that keeps prune records, the same for both engines. */
export interface Retention {
  /** Prunes; the records written (none when no run qualified). */
  prune(finishedBefore: Date, now: Date): Promise<PruneRecord[]>;
  /** The prune records that verify, oldest first (one that does not is named by `verifyPrunes`). */
  prunes(): Promise<PruneRecord[]>;
  /** Problems with the prune records (protocol.ts `pruneRecordProblems`; a record that does not verify, named). */
  verifyPrunes(): Promise<string[]>;
}

/**
 * The ledger's retention, when it keeps prune records: the embedded ledger opened here and the
 * DynamoDB one do; the running engine's embedded ledger, reached over loopback, does not (the
 * engine owns it). Found by shape, so that this module loads no DynamoDB SDK for a local command.
 */
export function retentionOf(ledger: Ledger): Retention | undefined {
  const kept = ledger as Partial<Record<'prune' | 'prunes' | 'verifyPrunes', (...args: never[]) => unknown>>;
  if (typeof kept.prune !== 'function' || typeof kept.prunes !== 'function' || typeof kept.verifyPrunes !== 'function') return undefined;
  const engine = ledger as unknown as {
    prune(finishedBefore: Date, now: Date): PruneRecord | undefined | PruneRecord[] | Promise<PruneRecord[]>;
    prunes(onDamaged?: () => void): PruneRecord[] | Promise<PruneRecord[]>;
    verifyPrunes(): string[] | Promise<string[]>;
  };
  return {
    // The embedded ledger writes one record (or none), the DynamoDB one a record per RUNS_PER_PRUNE_RECORD runs.
    prune: async (finishedBefore, now) => [await engine.prune(finishedBefore, now)].flat().filter((record) => record !== undefined),
    prunes: async () => engine.prunes(() => undefined),
    verifyPrunes: async () => engine.verifyPrunes(),
  };
}
