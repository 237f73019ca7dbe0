import { describe } from 'vitest';
import { aggregatesSpec } from './spec/aggregates.js';
import { approvalsSpec } from './spec/approvals.js';
import { blobsSpec } from './spec/blobs.js';
import { childWaitsSpec } from './spec/child-waits.js';
import { executionRunsSpec } from './spec/execution-runs.js';
import { fleetSpec } from './spec/fleet.js';
import { forksSpec } from './spec/forks.js';
import { pruneSpec } from './spec/prune.js';
import { effectsSpec } from './spec/effects.js';
import { effectApprovalsSpec } from './spec/effect-approvals.js';
import { effectResolutionsSpec } from './spec/effect-resolutions.js';
import { guardsSpec } from './spec/guards.js';
import { integritySpec } from './spec/integrity.js';
import { runsSpec } from './spec/runs.js';
import type { MakeLedger } from './spec/support.js';
import { toolCallsSpec } from './spec/tool-calls.js';
import { turnsSpec } from './spec/turns.js';
import { writersSpec } from './spec/writers.js';

export type { LedgerUnderTest } from './spec/support.js';

/**
 * The ledger's contract: what every storage engine (DynamoDB, embedded in memory or on disk, the
 * remote one) must do, in the semantics of the DynamoDB ledger's conditional writes, one spec per
 * role (spec/). Each test gets a fresh, empty ledger from `makeLedger`; times come from the `now`
 * arguments, never from a clock. `damageable`: the driver can damage the store behind the ledger;
 * `sharesStore`: it can open a second ledger on the same store (`LedgerUnderTest.another`);
 * `prunes: false`: the ledger keeps no prune records (the remote one: the engine serving it owns them).
 * `sharedReads`: reads hand out the stored records frozen, not copies (EmbeddedLedgerOptions
 * `sharedReads`): a caller's change throws instead of going unseen. `tellsSeen: false`: the ledger
 * cannot call a turn's `seen` back (the remote one), so it hands no versions on. `marksVersions:
 * false`: it marks no version of an item (EmbeddedLedgerOptions `handsState` false), so a read tells none.
 */
export function describeLedgerContract(name: string, makeLedger: MakeLedger, options: { damageable?: boolean; sharesStore?: boolean; prunes?: boolean; sharedReads?: boolean; tellsSeen?: boolean; marksVersions?: boolean } = {}): void {
  describe(`ledger contract: ${name}`, () => {
    runsSpec(makeLedger, options);
    guardsSpec(makeLedger);
    turnsSpec(makeLedger, options);
    toolCallsSpec(makeLedger, options);
    effectsSpec(makeLedger);
    aggregatesSpec(makeLedger);
    fleetSpec(makeLedger);
    effectApprovalsSpec(makeLedger);
    approvalsSpec(makeLedger);
    childWaitsSpec(makeLedger);
    executionRunsSpec(makeLedger);
    blobsSpec(makeLedger);
    integritySpec(makeLedger, options);
    forksSpec(makeLedger, options);
    writersSpec(makeLedger, options);
    if (options.prunes !== false) pruneSpec(makeLedger);
    // A person's settling of an escalated effect: on a storage engine's ledger, as a prune (the remote one's engine owns it).
    if (options.prunes !== false) effectResolutionsSpec(makeLedger);
  });
}
