import { Rule } from 'aws-cdk-lib/aws-events';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { LedgerTable } from './ledger-table.js';
import { StepFunction } from './step-function.js';
export interface RunRecoveryProps {
    readonly ledger: LedgerTable;
    /** The agent state machine's ARNs, built from its fixed name (the function must not reference the resource). */
    readonly stateMachine: {
        readonly stateMachine: string;
        readonly executions: string;
        readonly alias: string;
    };
    /**
     * Recoveries in a row without progress before a run is given up (`Agent.Unrecoverable`).
     * @default 3
     */
    readonly maxRecoveries?: number;
    readonly environment?: Record<string, string>;
    /** The agent's module (the recovery function reads the agent's scheduled-input rule). */
    readonly agentEntry: string;
}
/**
 * Recovery without an operator: an EventBridge rule on the agent state machine's "Execution
 * Status Change" sends FAILED and TIMED_OUT executions to the RecoverRun function, which resumes
 * the run with a new execution of the same run id (lambdas/steps/recover.ts), bounded by
 * `maxRecoveries`. ABORTED is left out: StopExecution is an operator's kill.
 */
export declare class RunRecovery extends Construct {
    readonly function: StepFunction;
    readonly rule: Rule;
    /** Events the rule could not deliver. */
    readonly deadLetters: Queue;
    constructor(scope: Construct, id: string, props: RunRecoveryProps);
}
