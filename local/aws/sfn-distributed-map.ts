/**
 * A distributed Map state, as the twin runs it. On AWS each iteration is a child workflow
 * execution "with its own execution history, separate from the parent's", and the Map runs up to
 * 10,000 of them at once, 10,000 when MaxConcurrency is absent or 0
 * (https://docs.aws.amazon.com/step-functions/latest/dg/state-map-distributed.html). The
 * interpreter runs the iterations in process, as an inline Map's: the engine keeps their events out
 * of the parent's history (so a batch of many runs does not meet the parent's 25,000-event quota
 * that AWS would never count them against), lifts the inline cap of 40, reads an ItemReader's S3
 * object as AWS does (local/aws/sfn-item-reader.ts), and refuses what it would run differently —
 * an ItemReader it does not read, ItemBatcher, ResultWriter, a failure tolerance, EXPRESS child
 * executions — and what AWS refuses: a MaxConcurrency over 10,000.
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
import { itemReaderProblems } from './sfn-item-reader.js';
import { walkStates, type AslDefinition, type AslState } from '../template/asl.js';

/** Fields of a distributed Map the twin does not run (the interpreter would ignore them). */
const UNRUN_FIELDS = ['ItemBatcher', 'ResultWriter', 'ToleratedFailurePercentage', 'ToleratedFailurePercentagePath', 'ToleratedFailureCount', 'ToleratedFailureCountPath'];

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
