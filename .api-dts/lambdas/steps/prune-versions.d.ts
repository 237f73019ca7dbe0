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
    list(): Promise<{
        arn: string;
        number: number;
    }[]>;
    /** The versions the aliases route to (ListStateMachineAliases, DescribeStateMachineAlias). */
    aliased(): Promise<Set<string>>;
    /** Whether a version has a RUNNING execution, and when its newest execution ended (ListExecutions on the version's ARN). */
    activity(versionArn: string): Promise<{
        running: boolean;
        lastEnded?: Date;
    }>;
    /** DeleteStateMachineVersion; false when the service refused it (an alias references it). */
    delete(versionArn: string): Promise<boolean>;
}
/** How many versions are kept whatever else holds, unless the construct says otherwise. */
export declare const DEFAULT_KEEP_VERSIONS = 20;
/** How long after a version's last execution ended it is still kept (recovery and the sweeper restart on it). */
export declare const DEFAULT_PRUNE_GRACE_MS: number;
export interface PruneResult {
    deleted: string[];
    kept: {
        arn: string;
        why: 'newest' | 'aliased' | 'running' | 'recent' | 'refused';
    }[];
}
/** The versions older than the newest `keep` that no alias routes to: the candidates, oldest first. */
export declare function pruneCandidates(versions: readonly {
    arn: string;
    number: number;
}[], aliased: ReadonlySet<string>, keep: number): {
    candidates: string[];
    kept: PruneResult['kept'];
};
export declare function createPruneVersions(deps: {
    versions: StateMachineVersions;
    clock: Clock;
    keep?: number;
    graceMs?: number;
}): () => Promise<PruneResult>;
