/**
 * A distributed Map state, as the twin runs it. On AWS each iteration is a child workflow
 * execution "with its own execution history, separate from the parent's", and the Map runs up to
 * 10,000 of them at once, 10,000 when MaxConcurrency is absent or 0
 * (https://docs.aws.amazon.com/step-functions/latest/dg/state-map-distributed.html). The
 * interpreter runs the iterations in process, as an inline Map's: the engine keeps their events out
 * of the parent's history (so a batch of many runs does not meet the parent's 25,000-event quota
 * that AWS would never count them against), lifts the inline cap of 40, reads an ItemReader's S3
 * object as AWS does (local/aws/sfn-item-reader.ts), and refuses what it would run differently —
 * an ItemReader it does not read, ItemBatcher, ResultWriter, a failure tolerance read from a Path,
 * EXPRESS child executions — and what AWS refuses: a MaxConcurrency over 10,000.
 *
 * A failed child fails the Map Run only past its tolerated failure threshold ("Tolerated failure
 * threshold for Distributed Map state",
 * https://docs.aws.amazon.com/step-functions/latest/dg/maprun-fail-threshold.html): more failed
 * items than ToleratedFailureCount, or a larger share of the items than ToleratedFailurePercentage
 * (default 0, when it names neither: one failed item fails it), and then the Map fails with
 * States.ExceedToleratedFailureThreshold, which a Retry or Catch on the Map handles as any error.
 * The twin runs each child inside a Parallel whose Catch sends any catchable failure to a Task of
 * the engine's own (`withFailureTolerance`), which counts it and, past the threshold, fails with that
 * error (so the Map fails with it, as the interpreter fails a Map with its first failed iteration).
 * A tolerated failed item's place in the Map's result holds its error and cause
 * (`{ "Error", "Cause" }`, what a Catch gives): without a ResultWriter the doc names no other shape,
 * so this is the twin's choice. The Map's item count, for the percentage, is counted by another
 * engine Task just before the Map (given the Map's InputPath and ItemsPath).
 *
 * Each child execution is started by the Map as the state machine's role: "Step Functions needs
 * appropriate permissions to allow the state machine role to invoke the StartExecution API action
 * for the Distributed Map state", and AWS's example grants `states:StartExecution` on the state
 * machine's own (unqualified) ARN ("IAM policies for using Distributed Map states",
 * https://docs.aws.amazon.com/step-functions/latest/dg/iam-policies-eg-dist-map.html). The twin
 * authorizes each child's start so (`withChildStarts`: a Task of the engine's own at the head of
 * the child's states, kept out of every history, as the start is the Map's doing). A refused start
 * starts no child, and the Map Run does not start ("A Map Run is either not started or fails … when
 * the state machine doesn't have the required permission",
 * https://docs.aws.amazon.com/step-functions/latest/dg/redrive-map-run.html). Which error the
 * execution then fails with is not on those pages: the twin fails it with `States.Runtime` ("an
 * execution failed due to some exception that it could not process"; no Retry or Catch handles
 * it), its cause AWS's AccessDenied message naming states:StartExecution — a Catch on the Map
 * cannot turn a missing grant into a path that passes locally.
 */
import { DISTRIBUTED_MAP_MAX_CONCURRENCY } from '../../lambdas/shared/limits.js';
import { itemReaderProblems, redirect } from './sfn-item-reader.js';
import { walkStates, type AslDefinition, type AslState } from '../template/asl.js';

/** Fields of a distributed Map the twin does not run (the interpreter would ignore them). */
const UNRUN_FIELDS = ['ItemBatcher', 'ResultWriter', 'ToleratedFailurePercentagePath', 'ToleratedFailureCountPath'];

/** The processing mode of a Map state (`INLINE` when it names none). */
export function mapMode(state: AslState): string {
  return (state['ItemProcessor'] as { ProcessorConfig?: { Mode?: string } } | undefined)?.ProcessorConfig?.Mode ?? 'INLINE';
}

/** What is wrong with a distributed Map state, for the twin: the fields it would not run as AWS does, or AWS's own refusal. */
export function distributedMapProblems(state: AslState): string[] {
  const problems = UNRUN_FIELDS.filter((field) => field in state).map((field) => `${field} (not run by the local engine)`);
  if ('ItemReader' in state) problems.push(...itemReaderProblems(state['ItemReader']));
  const executionType = (state['ItemProcessor'] as { ProcessorConfig?: { ExecutionType?: string } }).ProcessorConfig?.ExecutionType;
  if (executionType !== 'STANDARD') problems.push(`ProcessorConfig.ExecutionType ${executionType ?? '(none)'} (the local engine runs STANDARD child executions only)`);
  const count = state['ToleratedFailureCount'];
  if (count !== undefined && (typeof count !== 'number' || !Number.isInteger(count) || count < 0)) problems.push(`ToleratedFailureCount ${JSON.stringify(count)} (AWS accepts an integer of 0 or more)`);
  const percentage = state['ToleratedFailurePercentage'];
  if (percentage !== undefined && (typeof percentage !== 'number' || percentage < 0 || percentage > 100)) problems.push(`ToleratedFailurePercentage ${JSON.stringify(percentage)} (AWS accepts a number from 0 to 100)`);
  if ((count !== undefined || percentage !== undefined) && state['Retry'] !== undefined) problems.push('Retry beside a failure tolerance (the local engine counts failed items once per Map Run, not per retry)');
  const max = state['MaxConcurrency'];
  if (typeof max === 'number' && (!Number.isInteger(max) || max < 0 || max > DISTRIBUTED_MAP_MAX_CONCURRENCY)) {
    problems.push(`MaxConcurrency ${max} (AWS accepts an integer from 0 to ${DISTRIBUTED_MAP_MAX_CONCURRENCY} for a distributed Map)`);
  }
  return problems;
}

/** The iterations a distributed Map runs at once: its MaxConcurrency, or AWS's 10,000 when it names none (or 0). */
export function distributedMapConcurrency(maxConcurrency: number | undefined): number {
  return maxConcurrency === undefined || maxConcurrency === 0 ? DISTRIBUTED_MAP_MAX_CONCURRENCY : maxConcurrency;
}

/**
 * The distributed Map states of a definition and the states their child executions run (state
 * names are unique in a definition): what the engine keeps out of the parent's history.
 */
export function distributedMaps(definition: AslDefinition): { maps: Set<string>; childStates: Set<string> } {
  const maps = new Set<string>();
  const childStates = new Set<string>();
  walkStates(definition, (name, state) => {
    if (state.Type !== 'Map' || mapMode(state) !== 'DISTRIBUTED') return;
    maps.add(name);
    childStates.add(childStartStateName(name));
    childStates.add(itemStateName(name));
    childStates.add(itemFailedStateName(name));
    walkStates(state['ItemProcessor'] as AslDefinition, (inner) => childStates.add(inner));
  });
  return { maps, childStates };
}

/** The error a refused child start fails the execution with (see the top of this file). */
export const CHILD_START_REFUSED = 'States.Runtime';

/** The engine's Task that starts a distributed Map's child execution (`withChildStarts`). */
const childStartStateName = (map: string) => `${map} StartExecution`;

/** The engine's child-start Tasks of a definition (`withChildStarts`), each to the distributed Map it starts children for. */
export function childStartStates(definition: AslDefinition): Map<string, string> {
  const starts = new Map<string, string>();
  walkStates(definition, (name, state) => {
    if (state.Type === 'Map' && mapMode(state) === 'DISTRIBUTED') starts.set(childStartStateName(name), name);
  });
  return starts;
}

/**
 * The copy the interpreter runs: each distributed Map's child states begin with a Task of the
 * engine's own (its handler authorizes the child's StartExecution as the state machine's role),
 * whose result is discarded, so the child's first state sees the item as before.
 */
export function withChildStarts(definition: AslDefinition): AslDefinition {
  if (childStartStates(definition).size === 0) return definition;
  const copy = structuredClone(definition);
  walkStates(copy, (name, state) => {
    if (state.Type !== 'Map' || mapMode(state) !== 'DISTRIBUTED') return;
    const processor = state['ItemProcessor'] as AslDefinition;
    const start = childStartStateName(name);
    processor.States = { [start]: { Type: 'Task', Resource: 'arn:aws:states:::states:startExecution', ResultPath: null, Next: processor.StartAt }, ...processor.States };
    processor.StartAt = start;
  });
  return copy;
}

/** The error a distributed Map fails with when its failed items pass the tolerated threshold (see the top of this file). */
export const EXCEED_TOLERATED_FAILURE_THRESHOLD = 'States.ExceedToleratedFailureThreshold';

/**
 * What a distributed Map tolerates: more failed items than `count`, or a share over `percentage`
 * of its items, fails it. A Map naming neither tolerates 0%; one naming only a count has no
 * percentage threshold (else its count could never be reached).
 */
export interface FailureTolerance {
  count?: number;
  percentage?: number;
}

/** Whether a Map Run of `total` items with `failed` failed items has passed its threshold. */
export function exceedsTolerance(tolerance: FailureTolerance, failed: number, total: number): boolean {
  if (tolerance.count !== undefined && failed > tolerance.count) return true;
  return tolerance.percentage !== undefined && total > 0 && (failed / total) * 100 > tolerance.percentage;
}

/** The cause the Map fails with: the counts, and the threshold passed. */
export function toleranceCause(map: string, tolerance: FailureTolerance, failed: number, total: number, last: { Error?: unknown; Cause?: unknown }): string {
  const limits = [...(tolerance.percentage === undefined ? [] : [`ToleratedFailurePercentage ${tolerance.percentage}`]), ...(tolerance.count === undefined ? [] : [`ToleratedFailureCount ${tolerance.count}`])].join(', ');
  return `The Map Run of ${map} failed: ${failed} of ${total} items failed, over its tolerated failure threshold (${limits}); the last failed item's error: ${String(last.Error)}: ${String(last.Cause)}`;
}

const itemStateName = (map: string) => `${map} Item`;
const itemFailedStateName = (map: string) => `${map} ItemFailed`;
const runStartStateName = (map: string) => `${map} MapRun`;

/** The engine's tolerance Tasks of a definition (`withFailureTolerance`): each to its Map, its tolerance, and what it does. */
export function toleranceStates(definition: AslDefinition): Map<string, { map: string; tolerance: FailureTolerance; role: 'runStart' | 'itemFailed' }> {
  const states = new Map<string, { map: string; tolerance: FailureTolerance; role: 'runStart' | 'itemFailed' }>();
  walkStates(definition, (name, state) => {
    if (state.Type !== 'Map' || mapMode(state) !== 'DISTRIBUTED') return;
    const count = state['ToleratedFailureCount'] as number | undefined;
    const percentage = (state['ToleratedFailurePercentage'] as number | undefined) ?? (count === undefined ? 0 : undefined);
    const tolerance: FailureTolerance = { ...(count !== undefined && { count }), ...(percentage !== undefined && { percentage }) };
    states.set(runStartStateName(name), { map: name, tolerance, role: 'runStart' });
    states.set(itemFailedStateName(name), { map: name, tolerance, role: 'itemFailed' });
  });
  return states;
}

/**
 * The copy the interpreter runs (after `withItemReaders`, before `withChildStarts`): each
 * distributed Map's child states run as the one branch of a Parallel (its output the branch's),
 * whose Catch sends a failure to the engine's ItemFailed Task; before the Map, the engine's MapRun
 * Task is given its items (every transition into the Map sent to it). The tolerance fields go: the
 * library does not run them.
 */
export function withFailureTolerance(definition: AslDefinition): AslDefinition {
  if (childStartStates(definition).size === 0) return definition;
  const copy = structuredClone(definition);
  const rewrite = (scope: AslDefinition) => {
    for (const [name, state] of Object.entries(scope.States)) {
      for (const branch of state.Branches ?? []) rewrite(branch);
      const processor = (state.ItemProcessor ?? state.Iterator) as AslDefinition | undefined;
      if (processor) rewrite(processor);
      if (state.Type !== 'Map' || mapMode(state) !== 'DISTRIBUTED') continue;
      delete state['ToleratedFailureCount'];
      delete state['ToleratedFailurePercentage'];
      const { ProcessorConfig, StartAt, States } = processor as AslDefinition & { ProcessorConfig: unknown };
      const item = itemStateName(name);
      const failed = itemFailedStateName(name);
      state['ItemProcessor'] = {
        ProcessorConfig,
        StartAt: item,
        States: {
          [item]: { Type: 'Parallel', Branches: [{ StartAt, States }], OutputPath: '$[0]', Catch: [{ ErrorEquals: ['States.ALL'], Next: failed }], End: true },
          [failed]: { Type: 'Task', Resource: 'arn:aws:states:::states:startExecution', Parameters: { 'Error.$': '$.Error', 'Cause.$': '$.Cause' }, End: true },
        },
      };
      const runStart = runStartStateName(name);
      // The items the Map reads: its ItemsPath (an ItemReader's, on the context object) under its InputPath.
      const itemsPath = (state['ItemsPath'] as string | undefined) ?? '$';
      const items = itemsPath.startsWith('$$') || state['InputPath'] === undefined ? itemsPath : `${state['InputPath'] as string}${itemsPath.slice(1)}`;
      const runTask: AslState = { Type: 'Task', Resource: 'arn:aws:states:::states:startExecution', Parameters: { 'items.$': items }, ResultPath: null, Next: name };
      redirect(scope, name, runStart);
      scope.States[runStart] = runTask;
    }
  };
  rewrite(copy);
  return copy;
}

