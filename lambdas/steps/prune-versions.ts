import type { Clock } from '../shared/ports.js';

/**
 * Every deploy that changes the definition publishes a state machine version, and old versions
 * are retained (an execution keeps the version it started on): at 1,000 versions per state
 * machine `PublishStateMachineVersion`, and so the next deploy, fails ("You must manually delete
 * unused versions", Step Functions API reference). This step deletes the versions nothing needs,
 * by AWS's rules (DeleteStateMachineVersion: a version an alias references cannot be deleted; a
 * deleted version's executions in progress are not stopped, but nothing can start on it again):
 *
 *   kept: the newest `keep` versions; every version an alias routes to; every version with a
 *         RUNNING execution (its run is continued — handed off, recovered — on its own version,
 *         lambdas/adapters/sfn.ts `sameVersionAs`); every version whose newest execution ended
 *         less than `graceMs` ago (recovery restarts a failed run on its version within minutes,
 *         the sweeper within 15).
 *   deleted: the rest, oldest first. A version an alias was moved to meanwhile is refused by the
 *         service (ConflictException) and kept.
 */
export interface StateMachineVersions {
  /** Every version of the state machine: its ARN and number (ListStateMachineVersions). */
  list(): Promise<{ arn: string; number: number }[]>;
  /** The versions the aliases route to (ListStateMachineAliases, DescribeStateMachineAlias). */
  aliased(): Promise<Set<string>>;
  /** Whether a version has a RUNNING execution, and when its newest execution ended (ListExecutions on the version's ARN). */
  activity(versionArn: string): Promise<{ running: boolean; lastEnded?: Date }>;
  /** DeleteStateMachineVersion; false when the service refused it (an alias references it). */
  delete(versionArn: string): Promise<boolean>;
  /** The version's definition (DescribeStateMachine on its ARN), undefined for a version deleted meanwhile: the Lambda versions it pins (prune-function-versions.ts). */
  definition(versionArn: string): Promise<string | undefined>;
}

/** How many versions are kept whatever else holds, unless the construct says otherwise. */
export const DEFAULT_KEEP_VERSIONS = 20;
/** How long after a version's last execution ended it is still kept (recovery and the sweeper restart on it). */
export const DEFAULT_PRUNE_GRACE_MS = 60 * 60 * 1000;

export interface PruneResult {
  deleted: string[];
  kept: { arn: string; why: 'newest' | 'aliased' | 'running' | 'recent' | 'refused' }[];
}

/** The versions older than the newest `keep` that no alias routes to: the candidates, oldest first. */
export function pruneCandidates(versions: readonly { arn: string; number: number }[], aliased: ReadonlySet<string>, keep: number): { candidates: string[]; kept: PruneResult['kept'] } {
  const newestFirst = [...versions].sort((a, b) => b.number - a.number);
  const kept: PruneResult['kept'] = newestFirst.slice(0, keep).map(({ arn }) => ({ arn, why: 'newest' }));
  const older = newestFirst.slice(keep).reverse();
  for (const { arn } of older) if (aliased.has(arn)) kept.push({ arn, why: 'aliased' });
  return { candidates: older.filter(({ arn }) => !aliased.has(arn)).map(({ arn }) => arn), kept };
}

export function createPruneVersions(deps: { versions: StateMachineVersions; clock: Clock; keep?: number; graceMs?: number }) {
  const keep = deps.keep ?? DEFAULT_KEEP_VERSIONS;
  const graceMs = deps.graceMs ?? DEFAULT_PRUNE_GRACE_MS;
  if (!(Number.isInteger(keep) && keep >= 1)) throw new RangeError(`keep must be a whole number of versions ≥ 1, got ${keep}`);
  return async (): Promise<PruneResult> => {
    const [versions, aliased] = await Promise.all([deps.versions.list(), deps.versions.aliased()]);
    const { candidates, kept } = pruneCandidates(versions, aliased, keep);
    const deleted: string[] = [];
    for (const arn of candidates) {
      const activity = await deps.versions.activity(arn);
      if (activity.running) kept.push({ arn, why: 'running' });
      else if (activity.lastEnded && deps.clock.now().getTime() - activity.lastEnded.getTime() < graceMs) kept.push({ arn, why: 'recent' });
      else if (await deps.versions.delete(arn)) deleted.push(arn);
      else kept.push({ arn, why: 'refused' });
    }
    return { deleted, kept };
  };
}
