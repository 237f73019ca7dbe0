import type { ExecutionStatus, LocalEngine } from '../engine/local-engine.js';
/**
 * What EventBridge does on AWS for the rules on the state machine's "Execution Status Change":
 * when a local execution ends, the rules' targets get the same event shape
 * (events/execution-failed.json). Closing the engine is not an ending worth reporting: the
 * process is going away, and its watchdog finds the run on the next start.
 */
export declare const ENGINE_CLOSED = "LocalEngine.Closed";
export type StatusChangeTarget = (event: ReturnType<typeof executionStatusChange>) => Promise<unknown>;
/** Sends each execution ending whose status is in `rule` to `target`; errors go to `log`. */
export declare function routeStatusChanges(engine: LocalEngine, rule: readonly ExecutionStatus[], target: StatusChangeTarget, log: (line: string) => void): () => void;
/**
 * Waits until every status change reported so far was delivered: what a closing stack does before
 * it stops its handlers. An execution stopped just before (StopExecution, then the process ends)
 * is then recorded as killed, instead of left `running` for the next engine's watchdog to resume.
 */
export declare function settleStatusChanges(engine: LocalEngine): Promise<void>;
/** The EventBridge event Step Functions sends for an execution that ended. */
export declare function executionStatusChange(engine: LocalEngine, execution: ReturnType<LocalEngine['describeExecution']>, at: Date): {
    version: string;
    'detail-type': 'Step Functions Execution Status Change';
    source: 'aws.states';
    time: string;
    resources: string[];
    detail: {
        executionArn: string;
        stateMachineArn: string;
        stateMachineVersionArn?: string | undefined;
        stateMachineAliasArn?: string | undefined;
        name: string;
        status: ExecutionStatus;
        startDate: number;
        stopDate: number;
        input: string;
        error: string | null;
        cause: string | null;
    };
};
