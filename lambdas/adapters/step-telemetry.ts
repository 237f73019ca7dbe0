import { ErrorNames, RETRYABLE_ERRORS } from '../shared/errors.js';
import { MetricNames, type MetricPoint } from '../shared/metrics.js';
import { Steps, type StepName } from '../shared/steps.js';

/**
 * What a step's telemetry says, as pure functions of its input, result or error (table-tested in
 * test/unit/telemetry.test.ts): the keys appended to every log line, and the metrics emitted. The
 * middleware (middleware.ts) hands them to Powertools. Only identifiers, names, counts and money
 * leave here — never prompt text, model output, tool arguments or results, or a task token.
 */

/** Log keys: which run, execution, turn, call and tool a line is about. */
export type LogKeys = Partial<Record<'runId' | 'executionArn' | 'turn' | 'call' | 'tool' | 'approvalId' | 'outcome' | 'action' | 'status', string | number>>;

type Json = Record<string, unknown>;
const object = (value: unknown): Json | undefined => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined);
const text = (value: unknown): string | undefined => (typeof value === 'string' && value.length > 0 ? value.slice(0, 200) : undefined);
const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

function pick(keys: LogKeys, name: keyof LogKeys, value: string | number | undefined): void {
  if (value !== undefined) keys[name] = value;
}

/**
 * A tool's own failure (CallTool's `onToolFailure`) as a log line's attributes: the tool, and the
 * error's name, message and stack — where the fault is, in the tool's code or its library. Its
 * arguments are not logged; the model's answer is tools/failures.ts's.
 */
export function toolFailureFields(tool: string, error: unknown): Json {
  const failure = error instanceof Error ? error : new Error(String(error));
  return { tool: tool.slice(0, 200), error: failure.name, errorMessage: failure.message.slice(0, 1_000), ...(failure.stack && { stack: failure.stack.slice(0, 4_000) }) };
}

/** Keys from a step's input: a Task's payload, or an EventBridge event about an execution. */
export function inputKeys(event: unknown): LogKeys {
  const input = object(event) ?? {};
  const keys: LogKeys = {};
  pick(keys, 'runId', text(input['runId']));
  pick(keys, 'turn', num(input['turn']));
  pick(keys, 'call', num(input['call']));
  pick(keys, 'executionArn', text(input['executionArn']) ?? text(object(input['detail'])?.['executionArn']));
  return keys;
}

/** Keys from a step's result (the run id of a started run, the tool a call ran, what recovery did). */
export function resultKeys(result: unknown): LogKeys {
  const output = object(result) ?? {};
  const keys: LogKeys = {};
  pick(keys, 'runId', text(output['runId']));
  pick(keys, 'turn', num(output['turn']));
  pick(keys, 'call', num(output['call']));
  pick(keys, 'tool', text(output['name']));
  pick(keys, 'approvalId', text(output['approvalId']));
  pick(keys, 'outcome', text(output['outcome']));
  pick(keys, 'action', text(output['action']));
  pick(keys, 'status', text(output['status']));
  return keys;
}

const count = (name: MetricPoint['name'], value = 1): MetricPoint => ({ name, unit: 'Count', value });
const RUN_ENDS: Record<string, MetricPoint['name']> = {
  succeeded: MetricNames.RunsSucceeded,
  stopped: MetricNames.RunsStopped,
  killed: MetricNames.RunsKilled,
  failed: MetricNames.RunsFailed,
};
const length = (value: unknown): number => (Array.isArray(value) ? value.length : 0);

/** A decision's metrics (BudgetCheck's, or CallModel's before its call): a guard's warning, or its stop. */
function guardMetrics(output: Record<string, unknown>): MetricPoint[] {
  if (output['continue'] === true) return output['warning'] ? [count(MetricNames.GuardWarnings)] : [];
  // A stop by a guard (not the agent's own "done"); a request to extend a budget is not a stop yet.
  if (output['continue'] === false) return output['guard'] && !output['extension'] ? [count(MetricNames.GuardStops)] : [];
  return [];
}

/** The metrics of a step that returned `result`. */
export function resultMetrics(step: StepName, result: unknown): MetricPoint[] {
  const output = object(result);
  if (!output) return [];
  switch (step) {
    case Steps.CallModel: {
      // CallModel decides before it calls: its guards' metrics, then the turn's, if it made one.
      const decided = guardMetrics(output);
      if (output['turn'] === undefined) return decided;
      if (output['skippedBy'] === 'fleet') return [...decided, count(MetricNames.FleetBudgetSpent)];
      if (output['skipped'] !== undefined || output['counted'] === false) return decided;
      const tokens = object(output['tokens']);
      return [
        ...decided,
        count(MetricNames.Steps),
        count(MetricNames.ModelTurns),
        count(MetricNames.InputTokens, num(tokens?.['input']) ?? 0),
        count(MetricNames.OutputTokens, num(tokens?.['output']) ?? 0),
        { name: MetricNames.Dollars, unit: 'None', value: num(output['dollars']) ?? 0 },
      ];
    }
    case Steps.CallTool:
      if (output['outcome'] === 'skipped' || output['counted'] === false) return [];
      return [count(MetricNames.Steps), count(MetricNames.ToolCalls), ...(output['escalated'] === true ? [count(MetricNames.EffectsEscalated)] : [])];
    case Steps.BudgetCheck:
      return guardMetrics(output);
    case Steps.RequestApproval:
      return output['status'] === 'pending' ? [count(MetricNames.ApprovalsRequested)] : [];
    case Steps.ExpireApprovals:
      return length(output['expired']) > 0 ? [count(MetricNames.ApprovalsExpired, length(output['expired']))] : [];
    case Steps.Finalize: {
      const ended = RUN_ENDS[String(output['status'])];
      if (!ended) return [];
      return [
        count(ended),
        count(MetricNames.StepsPerRun, num(output['steps']) ?? 0),
        { name: MetricNames.DollarsPerRun, unit: 'None', value: num(output['dollars']) ?? 0 },
      ];
    }
    case Steps.ExecutionStopped:
      return output['action'] === 'killed' ? [count(MetricNames.RunsKilled)] : [];
    case Steps.RecoverRun:
      if (output['action'] === 'recovered') return [count(MetricNames.Recoveries)];
      if (output['action'] === 'gave-up') return [count(MetricNames.RecoveriesGivenUp), count(MetricNames.RunsFailed)];
      return [];
    case Steps.Sweep: {
      const gaveUp = length(output['gaveUp']);
      const points: MetricPoint[] = [
        count(MetricNames.Recoveries, length(output['recovered'])),
        count(MetricNames.RecoveriesGivenUp, gaveUp),
        count(MetricNames.RunsFailed, gaveUp),
        count(MetricNames.RunsNeedingAttention, length(output['reported']) + length(output['failed'])),
        count(MetricNames.ApprovalsWaiting, num(output['approvalsWaiting']) ?? 0),
        { name: MetricNames.OldestApprovalAgeSeconds, unit: 'Seconds', value: num(output['oldestApprovalAgeSeconds']) ?? 0 },
        count(MetricNames.OrphanedApprovals, length(output['orphanedApprovals'])),
      ];
      return points.filter((point) => point.value > 0 || point.name === MetricNames.ApprovalsWaiting || point.name === MetricNames.OldestApprovalAgeSeconds);
    }
    default:
      return [];
  }
}

/** The metrics of a step that failed with `error`: a retry to come, and an open breaker. */
export function errorMetrics(error: unknown): MetricPoint[] {
  const name = error instanceof Error ? error.name : undefined;
  if (!name || !(RETRYABLE_ERRORS as readonly string[]).includes(name)) return [];
  return name === ErrorNames.CircuitOpen ? [count(MetricNames.Retries), count(MetricNames.BreakerOpen)] : [count(MetricNames.Retries)];
}

/** The metrics of an approval API response: a decision recorded. */
export function decisionMetrics(method: string | undefined, statusCode: number | undefined): MetricPoint[] {
  return method === 'POST' && statusCode === 200 ? [count(MetricNames.ApprovalsDecided)] : [];
}
