import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import type { MetricPoint } from '../shared/metrics.js';
import { type StepName } from '../shared/steps.js';
import { type LogKeys } from './step-telemetry.js';
/** Where a step's error lines go: CloudWatch Logs (stderr) on AWS, a log file on the local engine. */
export type ErrorLog = (line: string) => void;
/**
 * Structured logs and metrics of a step (on AWS: Powertools Logger and Metrics, adapters/powertools.ts).
 * Keys appended in one invocation are on every line of that invocation, and only that one.
 */
export interface Telemetry {
    /** Before each invocation: drops the keys of the previous one. */
    resetKeys(): void;
    appendKeys(keys: LogKeys): void;
    info(message: string, attributes?: Record<string, unknown>): void;
    error(message: string, attributes?: Record<string, unknown>): void;
    addMetrics(points: MetricPoint[]): void;
    /** After each invocation, success or not: writes the metrics (EMF) and clears them. */
    flush(): void;
}
/**
 * Logs and metrics from what the step already says: the run, execution, turn and tool from its
 * input and result (appended to every line), counts and dollars from its result, a retry to come
 * from its error. Never the prompt, the model's text, tool arguments or results: the step results
 * carry only ids, names, counts and a short summary.
 */
export declare const stepTelemetry: (step: StepName, telemetry: Telemetry) => middy.MiddlewareObj<unknown, unknown, Error, Context>;
/** How long before the Lambda's timeout a step's abort signal fires, and the invocation fails. */
export declare const TIMEOUT_EARLY_MS = 1000;
/**
 * The error an invocation fails with when its early timeout fires: middy's own (its default
 * `timeoutEarlyResponse` throws it), made here so that the local runtime, which times invocations
 * itself, fails them with the same `name`, message and cause as AWS does.
 */
export declare function timeoutEarlyError(): Error;
export interface StepHandlerOptions {
    /** With `telemetry`: structured logs with run keys, and metrics, instead of error-only lines. */
    readonly step?: StepName;
    readonly telemetry?: Telemetry;
    /** More middlewares, outermost first (e.g. the tracer's handler subsegment). */
    readonly middlewares?: readonly middy.MiddlewareObj[];
    /**
     * middy's early timeout (`TIMEOUT_EARLY_MS` before the Lambda's). Off, the caller times the
     * invocation: the local runtime, which runs many invocations of a function in one process, while
     * middy's signal is one for the whole process (one container, one invocation on AWS).
     * @default true
     */
    readonly timeoutEarly?: boolean;
}
/**
 * The Lambda handler of a step: middy around a plain step function. The abort signal fires
 * `TIMEOUT_EARLY_MS` before the Lambda would time out, and is passed to outbound calls.
 */
export declare function stepHandler<Result>(step: (event: unknown, signal?: AbortSignal) => Promise<Result>, log?: ErrorLog, options?: StepHandlerOptions): middy.MiddyfiedHandler<unknown, Result, Error, Context, {}>;
