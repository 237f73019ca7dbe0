/**
 * The DynamoDB engine's items, without the SDK: the index names and partitions, and the item a
 * record is put as. Apart from dynamodb-ledger.ts so that what needs only these (the storage
 * layer's index queries, the local twin's item size limit) does not load the DynamoDB SDK.
 */
import { isPendingApproval, isRunningRun, type Key, type Stored } from './protocol.js';

/** Names of the table's secondary indexes; infra/ creates them with the same constants. */
export const LedgerIndexes = {
  byApprovalId: 'byApprovalId',
  pendingApprovals: 'pendingApprovals',
  /**
   * The runs marked `running` (sparse: `runningRun` is set while the status is `running` and
   * removed when the run ends), so the sweeper queries instead of scanning the table.
   */
  runningRuns: 'runningRuns',
  /**
   * Every run, by its agent (`runAgent`, on each run item) and creation time: the runs API lists an
   * agent's runs newest first with a keyed query, never a scan (a scan cannot be held away from the
   * task tokens' partition by IAM).
   */
  runsByAgent: 'runsByAgent',
} as const;

/** The partition of the `runningRuns` index, on the run item while it runs. */
export const RUNNING = 'RUNNING';
/** The partition of the `pendingApprovals` index, on an approval while it is pending. */
export const PENDING = 'PENDING';

/**
 * The attributes of the item this engine puts for a record, its seal aside: what DynamoDB stores,
 * and what its 400 KB item limit counts (the local twin holds the embedded engine to it).
 */
export function itemAttributes(key: Key, stored: Stored): Record<string, unknown> {
  const { countedSteps, guardReasons, expiresAt: expires } = stored.meta;
  return {
    ...stored.record,
    ...key,
    // A list, not a set: the window of counted keys is kept in the order they were counted (protocol.ts countStep).
    ...(countedSteps && { countedSteps }),
    ...(guardReasons && { guardReasons: new Set(guardReasons) }),
    ...(expires !== undefined && { expiresAt: expires }),
    ...(isRunningRun(stored.record) && { runningRun: RUNNING }),
    ...(stored.record['kind'] === 'run' && typeof stored.record['agent'] === 'string' && { runAgent: stored.record['agent'] }),
    ...(isPendingApproval(stored.record) && { pendingApproval: PENDING }),
  };
}
