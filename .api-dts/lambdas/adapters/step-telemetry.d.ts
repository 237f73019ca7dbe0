import { type MetricPoint } from '../shared/metrics.js';
import { type StepName } from '../shared/steps.js';
/**
 * What a step's telemetry says, as pure functions of its input, result or error (table-tested in
 * test/unit/telemetry.test.ts): the keys appended to every log line, and the metrics emitted. The
 * middleware (middleware.ts) hands them to Powertools. Only identifiers, names, counts and money
 * leave here — never prompt text, model output, tool arguments or results, or a task token.
 */
/** Log keys: which run, execution, turn, call and tool a line is about. */
export type LogKeys = Partial<Record<'runId' | 'executionArn' | 'turn' | 'call' | 'tool' | 'approvalId' | 'outcome' | 'action' | 'status', string | number>>;
/** Keys from a step's input: a Task's payload, or an EventBridge event about an execution. */
export declare function inputKeys(event: unknown): LogKeys;
/** Keys from a step's result (the run id of a started run, the tool a call ran, what recovery did). */
export declare function resultKeys(result: unknown): LogKeys;
/** The metrics of a step that returned `result`. */
export declare function resultMetrics(step: StepName, result: unknown): MetricPoint[];
/** The metrics of a step that failed with `error`: a retry to come, and an open breaker. */
export declare function errorMetrics(error: unknown): MetricPoint[];
/** The metrics of an approval API response: a decision recorded. */
export declare function decisionMetrics(method: string | undefined, statusCode: number | undefined): MetricPoint[];
