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
    walkStates(state['ItemProcessor'] as AslDefinition, (inner) => childStates.add(inner));
  });
  return { maps, childStates };
}
