import { Duration } from 'aws-cdk-lib';
import { type IFunction } from 'aws-cdk-lib/aws-lambda';
import { CfnStateMachineAlias, CfnStateMachineVersion, StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
/** The Lambda functions the loop runs, one per step kind. */
export interface AgentStepFunctions {
    readonly startRun: IFunction;
    readonly budgetCheck: IFunction;
    readonly callModel: IFunction;
    readonly requestApproval: IFunction;
    readonly callTool: IFunction;
    readonly finalize: IFunction;
    /** Continue-as-new: hands a run near its history limit to a successor execution. @default no handoff state */
    readonly handoff?: IFunction;
    /** Context compaction: one model call that summarises the older turns. @default no compaction state */
    readonly compact?: IFunction;
}
export interface AgentStateMachineProps {
    readonly functions: AgentStepFunctions;
    /** The state machine's name (fixed, so that grants can name it without referencing it). */
    readonly stateMachineName: string;
    /**
     * The longest an approval may wait before the task itself times out. Approvals normally expire
     * earlier, at the run's `approvalTimeoutSeconds`, through the expiry sweep; this is the backstop.
     * @default Duration.days(8)
     */
    readonly approvalBackstop?: Duration;
    /** @default Duration.days(10) */
    readonly executionTimeout?: Duration;
    /**
     * What this deploy's state machine version says about itself (≤ 256 characters), e.g. the agent
     * and its code version: the console and `DescribeStateMachine` show it next to each execution.
     * @default 'savepoint agent loop'
     */
    readonly versionDescription?: string;
    /**
     * How many tool calls of one model turn run at once (the `ToolCalls` Map's MaxConcurrency). Each
     * call is still claimed and recorded on its own, and the model gets the results in call order;
     * `1` runs them one after another. An inline Map runs at most 40 iterations at once.
     * @default 10
     */
    readonly toolConcurrency?: number;
}
export declare const DEFAULT_TOOL_CONCURRENCY = 10;
/** The alias new runs start on: it routes every new execution to the version this deploy published. */
export declare const LIVE_ALIAS = "live";
export { definitionIdentity } from '../lambdas/shared/definition-identity.js';
/** State names are part of the contract: tests, the local engine and the console refer to them. */
export declare const States: {
    readonly StartRun: 'StartRun';
    readonly BudgetCheck: 'BudgetCheck';
    readonly CallModel: 'CallModel';
    readonly RequestApproval: 'RequestApproval';
    readonly RequestBudgetExtension: 'RequestBudgetExtension';
    readonly CallTool: 'CallTool';
    /** The Map over one turn's tool calls, and the Choice each iteration starts with. */
    readonly ToolCalls: 'ToolCalls';
    readonly NeedsApproval: 'NeedsApproval';
    readonly Finalize: 'Finalize';
    readonly RecordFailure: 'RecordFailure';
    /** Reads the seconds of a provider's `retry-after` from the error (two Pass states)… */
    readonly ReadRetryAfter: 'ReadRetryAfter';
    readonly RetryAfterSeconds: 'RetryAfterSeconds';
    /** …and waits them out before calling the model again. */
    readonly WaitRetryAfter: 'WaitRetryAfter';
    /** Reads the seconds a settling send has left from CallTool's `Agent.SettleWait` (two Pass states)… */
    readonly ReadSettleWait: 'ReadSettleWait';
    readonly SettleSeconds: 'SettleSeconds';
    /** …and waits them out before CallTool claims the call again. */
    readonly WaitSettle: 'WaitSettle';
    readonly Handoff: 'Handoff';
    readonly Compact: 'Compact';
    /** Seeds the first BudgetCheck's history estimate from StartRun's result. */
    readonly SeedHistory: 'SeedHistory';
};
/**
 * Lambda's own faults on invoke — throttling under load included — on every Task, with backoff
 * and full jitter (replaces LambdaInvoke's default retrier, which has no TooManyRequests and no
 * jitter). Safe: every step is idempotent per (run, turn, call).
 */
export declare const LAMBDA_SERVICE_ERRORS: readonly ['Lambda.TooManyRequestsException', 'Lambda.ServiceException', 'Lambda.AWSLambdaException', 'Lambda.SdkClientException', 'Lambda.ClientExecutionTimeoutException'];
/**
 * A Lambda Task's TimeoutSeconds over its function's timeout: a cold start's Init phase (up to
 * 10 s) is not part of the function's timeout, and the invoke itself takes a moment. A Task that
 * gives up first reports States.Timeout while the function may still be running, its answer lost.
 */
export declare const TASK_TIMEOUT_MARGIN: Duration;
/**
 * The agent loop as a Standard state machine (JSONPath only, so that the local engine runs the
 * very same definition):
 *
 *   StartRun ─► BudgetCheck ─► CallModel ─► ToolCalls (Map, one iteration per tool call of the turn):
 *                  ▲   │ stop                      [needs approval?] ─► (RequestApproval) ─► CallTool
 *                  │   ▼                                                                      │
 *                  │ Finalize                                                                  │
 *                  └───────────────────────────────────────────────────────────────────────────┘
 *
 * The calls of a turn run concurrently (`toolConcurrency`): a call waiting for a person does not
 * hold back the others, and a failed call fails the Map (its Catch records the run's failure).
 * Execution payloads carry pointers (run id, turn, call), never the conversation.
 */
export declare class AgentStateMachine extends Construct {
    readonly stateMachine: StateMachine;
    /** This deploy's version of the state machine (kept after the next deploy: its executions drain on it). */
    readonly version: CfnStateMachineVersion;
    /** The alias new runs start on (`<machine>:live`), pointing at `version`. */
    readonly alias: CfnStateMachineAlias;
    /**
     * ARNs built from the fixed name, for grants that must not reference the resource: the machine,
     * its executions, and its alias (what new runs and continued ones are started on).
     */
    readonly arns: {
        readonly stateMachine: string;
        readonly executions: string;
        readonly alias: string;
    };
    constructor(scope: Construct, id: string, props: AgentStateMachineProps);
}
