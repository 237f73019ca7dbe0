import { Duration } from 'aws-cdk-lib';
import { Rule } from 'aws-cdk-lib/aws-events';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { LedgerTable } from './ledger-table.js';
import { StepFunction } from './step-function.js';
export interface RunSweeperProps {
    readonly ledger: LedgerTable;
    /** The agent state machine's ARNs, built from its fixed name. */
    readonly stateMachine: {
        readonly stateMachine: string;
        readonly executions: string;
        readonly alias: string;
    };
    readonly agentEntry: string;
    readonly environment?: Record<string, string>;
    /** Recoveries in a row without progress before a run is given up (as RunRecovery's). @default 3 */
    readonly maxRecoveries?: number;
    /** @default Duration.minutes(15) */
    readonly every?: Duration;
    /** Where events the rule could not deliver go. */
    readonly deadLetterQueue?: IQueue;
}
/**
 * The sweeper (lambdas/steps/sweep.ts) on a schedule: resumes runs still marked `running` whose
 * execution ended unnoticed, and reports approvals whose execution is gone. It may describe the
 * agent's executions and start new ones — nothing else in Step Functions.
 */
export declare class RunSweeper extends Construct {
    readonly function: StepFunction;
    readonly rule: Rule;
    constructor(scope: Construct, id: string, props: RunSweeperProps);
}
