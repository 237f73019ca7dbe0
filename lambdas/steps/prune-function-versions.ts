import type { Clock } from '../shared/ports.js';
import { createPruneVersions, type PruneResult, type StateMachineVersions } from './prune-versions.js';

/**
 * Every deploy that changes a step function's code publishes a Lambda version, and CDK retains the
 * old ones (infra/step-function.ts: an execution started before the deploy still calls them), so
 * they add up against Lambda's code storage quota (75 GB a Region). After the state machine
 * versions are pruned (prune-versions.ts), this step deletes the Lambda versions nothing can call:
 *
 *   pinned: every qualified function ARN a remaining state machine version's Tasks invoke
 *           (`FunctionName`): those versions run its executions, live and future.
 *   kept:   every pinned version; `$LATEST`; and, per function, every version above the highest
 *           pinned one — CloudFormation publishes a deploy's Lambda versions before the state
 *           machine version that names them, so such a version may be a deploy in progress.
 *   deleted: the rest, each by DeleteFunction with its Qualifier (never the function itself). A
 *           version an alias references is refused by Lambda (ResourceConflictException) and kept;
 *           one already gone (ResourceNotFoundException) counts as deleted by someone else.
 *
 * The pins come from every state machine of the stack at once: a pass that could not read one
 * version's definition deletes nothing (its pins are unknown).
 */
export interface FunctionVersions {
  /** The function's versions (ListVersionsByFunction, every page): `$LATEST` and the numbers. */
  list(functionArn: string): Promise<string[]>;
  /** DeleteFunction with `Qualifier`: 'refused' when an alias references the version, 'gone' when it was not there. */
  delete(functionArn: string, version: string): Promise<'deleted' | 'refused' | 'gone'>;
}

export interface FunctionPruneResult {
  /** Qualified ARNs deleted. */
  deleted: string[];
  /** Qualified ARNs kept, and why (`$LATEST` is never listed). */
  kept: { arn: string; why: 'pinned' | 'newer' | 'refused' }[];
}

/** A function version's ARN: `arn:<partition>:lambda:<region>:<account>:function:<name>:<number>`. */
const QUALIFIED_FUNCTION_ARN = /^(arn:[^:]+:lambda:[^:]+:\d+:function:[^:]+):(\d+)$/;

/**
 * The qualified function ARNs a state machine definition invokes: every `FunctionName` (the
 * `lambda:invoke` integration's Parameters or Arguments) or `Resource` naming a numbered version,
 * in any state, nested ones (Parallel branches, Map item processors) included.
 */
export function pinnedFunctionVersions(definition: unknown): string[] {
  const found = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (typeof value !== 'object' || value === null) return;
    for (const [key, field] of Object.entries(value)) {
      if ((key === 'FunctionName' || key === 'Resource') && typeof field === 'string' && QUALIFIED_FUNCTION_ARN.test(field)) found.add(field);
      else walk(field);
    }
  };
  walk(definition);
  return [...found];
}

/** The pinned versions by function: its unqualified ARN → the numbers pinned. */
export function pinsByFunction(pinned: Iterable<string>): Map<string, Set<number>> {
  const byFunction = new Map<string, Set<number>>();
  for (const arn of pinned) {
    const match = QUALIFIED_FUNCTION_ARN.exec(arn);
    if (!match) continue;
    const numbers = byFunction.get(match[1]!) ?? new Set<number>();
    numbers.add(Number(match[2]));
    byFunction.set(match[1]!, numbers);
  }
  return byFunction;
}

/**
 * Which of a function's `listed` versions to delete, given the numbers `pinned`: the numbered ones
 * below the highest pinned that no state machine version pins. Never `$LATEST` (or any qualifier
 * that is not a number); nothing at all when nothing is pinned.
 */
export function functionVersionsToDelete(listed: readonly string[], pinned: ReadonlySet<number>): { remove: number[]; kept: { number: number; why: 'pinned' | 'newer' }[] } {
  const highest = Math.max(...pinned);
  const remove: number[] = [];
  const kept: { number: number; why: 'pinned' | 'newer' }[] = [];
  for (const version of listed) {
    if (!/^\d+$/.test(version)) continue;
    const number = Number(version);
    if (pinned.has(number)) kept.push({ number, why: 'pinned' });
    else if (!(number < highest)) kept.push({ number, why: 'newer' });
    else remove.push(number);
  }
  return { remove: remove.sort((a, b) => a - b), kept };
}

/**
 * The Lambda versions the state machine's remaining versions pin, read after its own versions were
 * pruned (a fresh list: a version published since is read too). A version deleted meanwhile pins
 * nothing; any other failure to read one throws, and the caller deletes no Lambda version.
 */
export async function remainingPins(versions: StateMachineVersions): Promise<string[]> {
  const pins: string[] = [];
  for (const { arn } of await versions.list()) {
    const definition = await versions.definition(arn);
    if (definition !== undefined) pins.push(...pinnedFunctionVersions(JSON.parse(definition)));
  }
  return pins;
}

/**
 * Deletes, per function the pins name, the versions `functionVersionsToDelete` picks, oldest first.
 * Every function is listed before any version is deleted: a function the role may not reach (it
 * lacks the stack's tag) fails the pass before it deletes anything.
 */
export function createPruneFunctionVersions(deps: { functions: FunctionVersions }) {
  return async (pinned: Iterable<string>): Promise<FunctionPruneResult> => {
    const result: FunctionPruneResult = { deleted: [], kept: [] };
    const plans: { functionArn: string; remove: number[] }[] = [];
    for (const [functionArn, numbers] of pinsByFunction(pinned)) {
      const { remove, kept } = functionVersionsToDelete(await deps.functions.list(functionArn), numbers);
      result.kept.push(...kept.map(({ number, why }) => ({ arn: `${functionArn}:${number}`, why })));
      plans.push({ functionArn, remove });
    }
    for (const { functionArn, remove } of plans) {
      for (const number of remove) {
        const arn = `${functionArn}:${number}`;
        if ((await deps.functions.delete(functionArn, String(number))) === 'refused') result.kept.push({ arn, why: 'refused' });
        else result.deleted.push(arn);
      }
    }
    return result;
  };
}

/**
 * A stack's pruning pass: each state machine's versions, one after the other (one's failure does
 * not hold back the others); then the Lambda versions no remaining state machine version pins,
 * across every state machine at once (a function's pins may come from any of them), and only when
 * every state machine's pins were read: an unread version's pins are unknown, so nothing is deleted.
 */
export function createPruneStackVersions(deps: {
  stateMachines: Readonly<Record<string, { versions: StateMachineVersions; keep?: number }>>;
  functions: () => Promise<FunctionVersions>;
  clock: Clock;
  graceMs?: number;
}) {
  const failed = (error: Error) => ({ error: `${error.name}: ${error.message}` });
  return async () => {
    const stateMachines: Record<string, PruneResult | { error: string }> = {};
    const pins: string[] = [];
    let pinsKnown = true;
    for (const [name, { versions, keep }] of Object.entries(deps.stateMachines)) {
      stateMachines[name] = await createPruneVersions({ versions, clock: deps.clock, ...(keep !== undefined && { keep }), ...(deps.graceMs !== undefined && { graceMs: deps.graceMs }) })().catch(failed);
      try {
        pins.push(...(await remainingPins(versions)));
      } catch (error) {
        pinsKnown = false;
        stateMachines[name] = failed(error as Error);
      }
    }
    const functionVersions: FunctionPruneResult | { error: string } = pinsKnown
      ? await Promise.resolve().then(deps.functions).then((functions) => createPruneFunctionVersions({ functions })(pins)).catch(failed)
      : { error: "not pruned: the Lambda versions some state machine's versions pin could not be read" };
    return { stateMachines, functionVersions };
  };
}
