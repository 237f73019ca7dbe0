import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { isHarnessError, stepError } from '../tools/failures.js';
import type { MetricPoint } from '../shared/metrics.js';
import { ROUTING_ERRORS } from '../shared/errors.js';
import { Steps, type StepName } from '../shared/steps.js';
import { errorMetrics, inputKeys, resultKeys, resultMetrics, type LogKeys } from './step-telemetry.js';

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

const errorClassifier = (log: ErrorLog): middy.MiddlewareObj => ({
  onError: (request) => {
    request.error = stepError(request.error) as Error;
    log(JSON.stringify({ level: routes(request.error) ? 'INFO' : 'ERROR', error: request.error.name, message: request.error.message, ...faultStack(request.error) }));
  },
});

/** Whether the step threw to route the run into a wait (errors.ts ROUTING_ERRORS): no fault. */
const routes = (error: Error): boolean => (ROUTING_ERRORS as readonly string[]).includes(error.name);

/**
 * The stack of a step's error that is none of the harness's own (errors.ts: those say what they
 * mean by their name): a bug — in a hook of the agent's (`prompt`, `needsApproval`), or in
 * savepoint — whose place the operator needs, bounded as a log line must be.
 */
function faultStack(error: Error): { stack?: string } {
  return isHarnessError(error) || error.stack === undefined ? {} : { stack: error.stack.slice(0, 4_000) };
}

/**
 * Logs and metrics from what the step already says: the run, execution, turn and tool from its
 * input and result (appended to every line), counts and dollars from its result, a retry to come
 * from its error. Never the prompt, the model's text, tool arguments or results: the step results
 * carry only ids, names, counts and a short summary.
 */
export const stepTelemetry = (step: StepName, telemetry: Telemetry): middy.MiddlewareObj<unknown, unknown, Error, Context> => ({
  before: (request) => {
    telemetry.resetKeys();
    telemetry.appendKeys({ ...inputKeys(request.event) });
  },
  after: (request) => {
    telemetry.appendKeys(resultKeys(request.response));
    telemetry.addMetrics(resultMetrics(step, request.response));
    // The step's own words for a person: its summary, and why recovery did what it did. (Other
    // reasons may quote a validation error about tool arguments: not at info level.)
    const { summary, reason } = (request.response ?? {}) as { summary?: unknown; reason?: unknown };
    const words = Object.entries({ summary, reason: step === Steps.RecoverRun ? reason : undefined }).filter(([, value]) => typeof value === 'string' && value.length > 0);
    telemetry.info(`${step} done`, Object.fromEntries(words.map(([key, value]) => [key, (value as string).slice(0, 4_000)])));
    telemetry.flush();
  },
  onError: (request) => {
    request.error = stepError(request.error) as Error;
    telemetry.addMetrics(errorMetrics(request.error));
    const line = { error: request.error.name, errorMessage: request.error.message.slice(0, 1_000), ...faultStack(request.error) };
    if (routes(request.error)) telemetry.info(`${step} waits`, line);
    else telemetry.error(`${step} failed`, line);
    telemetry.flush();
  },
});

/** How long before the Lambda's timeout a step's abort signal fires, and the invocation fails. */
export const TIMEOUT_EARLY_MS = 1_000;

/**
 * The error an invocation fails with when its early timeout fires: middy's own (its default
 * `timeoutEarlyResponse` throws it), made here so that the local runtime, which times invocations
 * itself, fails them with the same `name`, message and cause as AWS does.
 */
export function timeoutEarlyError(): Error {
  const error = new Error('[AbortError]: The operation was aborted.', { cause: { package: '@middy/core' } });
  error.name = 'TimeoutError';
  return error;
}

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
 * `TIMEOUT_EARLY_MS` before the Lambda would time out, and is passed to outbound calls. The
 * invocation's context comes third (the local runtime's one handler a function finds its
 * invocation's own timing by it: local/runtime/handlers.ts).
 */
export function stepHandler<Result>(
  step: (event: unknown, signal?: AbortSignal, context?: Context) => Promise<Result>,
  log: ErrorLog = (line) => console.error(line),
  options: StepHandlerOptions = {},
) {
  const timeoutEarlyInMillis = options.timeoutEarly === false ? 0 : TIMEOUT_EARLY_MS;
  const timeoutEarlyResponse = () => {
    throw timeoutEarlyError();
  };
  const handler = middy<unknown, Result, Error, Context>({ timeoutEarlyInMillis, timeoutEarlyResponse });
  for (const middleware of options.middlewares ?? []) handler.use(middleware as middy.MiddlewareObj<unknown, Result, Error, Context>);
  if (options.telemetry && options.step) handler.use(stepTelemetry(options.step, options.telemetry) as middy.MiddlewareObj<unknown, Result, Error, Context>);
  else handler.use(errorClassifier(log));
  return handler.handler((event, context, { signal }) => step(event, signal, context));
}
