/**
 * What the engine checks and changes in a definition before running it: the fields the interpreter
 * would silently run differently from AWS are refused, and its timers are clamped to what Node can arm.
 */
import { distributedMapConcurrency, distributedMapProblems, mapMode } from '../aws/sfn-distributed-map.js';
import { inlineMapConcurrency } from '../aws/sfn-inline-map.js';
import { walkStates, type AslDefinition, type AslState } from '../template/asl.js';

/**
 * Longest delay Node's setTimeout accepts (~24.8 days). Anything longer fires after 1 ms, so AWS's
 * 99999999 s maxima must be clamped to this before the library arms its timers.
 */
const MAX_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

/** Fields the library silently ignores; running a definition that uses them would diverge from AWS. */
const UNSUPPORTED_FIELDS = ['Assign', 'Arguments', 'Output', 'ItemReader', 'ItemBatcher', 'ResultWriter', 'ToleratedFailurePercentage', 'ToleratedFailurePercentagePath', 'ToleratedFailureCount', 'ToleratedFailureCountPath'];

/** The fields of UNSUPPORTED_FIELDS that only a distributed Map has: refused there by distributedMapProblems, with AWS's reason. */
const DISTRIBUTED_MAP_FIELDS = new Set(['ItemReader', 'ItemBatcher', 'ResultWriter', 'ToleratedFailurePercentage', 'ToleratedFailurePercentagePath', 'ToleratedFailureCount', 'ToleratedFailureCountPath']);

export function assertSupported(definition: AslDefinition): void {
  if (definition.QueryLanguage === 'JSONata') throw new Error('JSONata definitions are not supported locally (JSONPath only)');
  walkStates(definition, (name, state) => {
    const mode = state.Type === 'Map' ? mapMode(state) : undefined;
    // A distributed Map's own fields are judged by its rules (local/aws/sfn-distributed-map.ts).
    const used = mode === 'DISTRIBUTED' ? [...UNSUPPORTED_FIELDS.filter((field) => field in state && !DISTRIBUTED_MAP_FIELDS.has(field)), ...distributedMapProblems(state)] : UNSUPPORTED_FIELDS.filter((field) => field in state);
    if (state.QueryLanguage === 'JSONata') used.push('QueryLanguage: JSONata');
    if (mode !== undefined && mode !== 'INLINE' && mode !== 'DISTRIBUTED') used.push(`ProcessorConfig.Mode: ${mode}`);
    if (used.length > 0) throw new Error(`State ${name} uses ${used.join(', ')}, which the local engine does not support`);
    const negated = negatedTypeTests(state['Choices']);
    if (negated.length > 0) {
      throw new Error(
        `Choice state ${name} tests ${negated.join(', ')}: aws-local-stepfunctions evaluates a type test with false as never matching (AWS matches the opposite); write Not({ ${negated[0]!.replace(': false', ': true')} }) instead`,
      );
    }
  });
}

const TYPE_TESTS = ['IsNull', 'IsPresent', 'IsNumeric', 'IsString', 'IsBoolean', 'IsTimestamp'];

/** Type tests written with `false` anywhere in a Choice state's rules (including inside And/Or/Not). */
function negatedTypeTests(rules: unknown): string[] {
  if (Array.isArray(rules)) return rules.flatMap(negatedTypeTests);
  if (!rules || typeof rules !== 'object') return [];
  const rule = rules as Record<string, unknown>;
  const own = TYPE_TESTS.filter((test) => rule[test] === false).map((test) => `${test}: false`);
  return [...own, ...negatedTypeTests(rule['And']), ...negatedTypeTests(rule['Or']), ...negatedTypeTests(rule['Not'])];
}

/**
 * A copy of the definition the library can time (and run) faithfully: a Task without TimeoutSeconds waits as
 * long as Node allows (the library would default to 60 s; the service to 99999999 s), and every
 * seconds field is clamped so setTimeout cannot overflow into a 1 ms timer. A Task named in
 * `taskTimeoutMs` times out after that many ms instead (tests).
 */
export function clampTimers(definition: AslDefinition, taskTimeoutMs: Record<string, number> = {}): AslDefinition {
  const copy = structuredClone(definition);
  const clamp = (s: number | undefined) => (s === undefined ? undefined : Math.min(s, MAX_TIMER_SECONDS));
  if (copy.TimeoutSeconds !== undefined) copy.TimeoutSeconds = clamp(copy.TimeoutSeconds);
  walkStates(copy, (name, state: AslState) => {
    if (state.Type === 'Task') {
      const override = taskTimeoutMs[name];
      if (override !== undefined) state.TimeoutSeconds = override / 1000;
      else if (state.TimeoutSeconds === undefined && state.TimeoutSecondsPath === undefined) state.TimeoutSeconds = MAX_TIMER_SECONDS;
      else if (state.TimeoutSeconds !== undefined) state.TimeoutSeconds = clamp(state.TimeoutSeconds);
      if (state.HeartbeatSeconds !== undefined) state.HeartbeatSeconds = clamp(state.HeartbeatSeconds);
    }
    if (state.Type === 'Wait' && typeof state.Seconds === 'number') state.Seconds = clamp(state.Seconds);
    // The library would run a higher MaxConcurrency as given; the service caps an inline Map (local/aws/sfn-inline-map.ts).
    // A distributed Map runs up to 10,000 at once, and that many when it names no limit (local/aws/sfn-distributed-map.ts).
    if (state.Type === 'Map' && mapMode(state) === 'DISTRIBUTED') {
      if (state.MaxConcurrencyPath === undefined) state.MaxConcurrency = distributedMapConcurrency(state.MaxConcurrency as number | undefined);
    } else if (state.Type === 'Map' && typeof state.MaxConcurrency === 'number') state.MaxConcurrency = inlineMapConcurrency(state.MaxConcurrency);
  });
  return copy;
}

/**
 * The copy the interpreter runs: every Task's TimeoutSeconds lifted to the longest timer Node arms,
 * so that the engine's own timer (engine/lambda-task.ts, on the engine's clock) is what times a Task
 * out, never the library's real setTimeout. A TimeoutSecondsPath (read from the state's input) is
 * left to the library.
 */
export function liftTaskTimeouts(definition: AslDefinition): AslDefinition {
  const copy = structuredClone(definition);
  walkStates(copy, (_name, state: AslState) => {
    if (state.Type === 'Task' && state.TimeoutSecondsPath === undefined) state.TimeoutSeconds = MAX_TIMER_SECONDS;
  });
  return copy;
}

/**
 * The copy the interpreter runs: a `ResultPath` of `$` (a state's or a catcher's) left out. It is
 * the default, the result (or the caught error) in place of the whole input, which the library
 * applies when the field is absent; given explicitly, the library sets a field named `$` on the
 * input instead (and refuses an input that is not an object), so the states after it read paths
 * that are not there.
 */
export function rootResultPaths(definition: AslDefinition): AslDefinition {
  const copy = structuredClone(definition);
  walkStates(copy, (_name, state: AslState) => {
    if (state['ResultPath'] === '$') delete state['ResultPath'];
    for (const catcher of (state['Catch'] ?? []) as { ResultPath?: unknown }[]) if (catcher.ResultPath === '$') delete catcher.ResultPath;
  });
  return copy;
}
