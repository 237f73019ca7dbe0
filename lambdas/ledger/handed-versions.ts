import type { StepBasis } from './ledger.js';
import { andThen, type Maybe } from './maybe.js';
import type { Key, Stored } from './protocol.js';
import type { ItemWrite } from './storage-call.js';

/**
 * A write on the versions a step was handed (ledger.ts `StepBasis`; steps/handed-step.ts): its own
 * items put, the run item and the global kill item only checked — ConditionChecks on the versions
 * handed, never a rewrite from what was handed (a DynamoDB condition compares the seal attribute, not
 * the content it covers: a rewrite would seal over an alteration made behind the ledger's back; left
 * alone, the next read names it). One write: any condition failed is the caller's to read and decide
 * on (StepChangedError).
 */

/**
 * A write given the versions its step's checks were made on found one of them changed, or its
 * record there already: nothing was written. The step reads, and decides again (steps/call-tool.ts).
 * The same name on every engine, and across the loopback ledger.
 */
export class StepChangedError extends Error {
  override readonly name = 'Ledger.StepChanged';
  constructor(what: string) {
    super(`the items a step was handed changed, or its record is there: ${what}`);
  }
}

/** Whether `error` is a `StepChangedError`, by name (the loopback ledger throws its own class under the same name). */
export const isStepChanged = (error: unknown): boolean => error instanceof Error && error.name === 'Ledger.StepChanged';

/** The attempts of a write on handed versions that meets its siblings' transactions before it reads instead. */
const CONFLICT_ATTEMPTS = 8;

/** How an engine names and checks an item's version (StorageLedger `versions`). */
export interface EngineVersions {
  /**
   * The version mark of an item: `stored` as the engine read it, or as it wrote it (an item it was
   * given to write, once written); undefined when it has none. DynamoDB: its seal attribute.
   */
  versionOf(stored: Stored): string | undefined;
  /** An item that stands for the version `mark` names: the `expected` of a ConditionCheck, its record unknown. */
  atVersion(mark: string): Stored;
  /**
   * `putItems` for a write on handed versions, all or nothing: `changed` when a condition failed,
   * `conflict` when another writer's transaction held one of its items (nothing of them changed:
   * it may go again); the items the engine remembers are left alone.
   */
  putChecked(writes: readonly ItemWrite[]): Maybe<'written' | 'changed' | 'conflict'>;
}

/**
 * Puts `writes` (each on its own condition) with the run item and the global kill item (`checked`)
 * checked on the versions `basis` names (kill null: the item absent); `answer` once written. `guard`
 * authorizes each attempt as the engine makes it (StorageLedger `guardStorage`).
 */
export function writeOnBasis<R>(
  engine: EngineVersions,
  { guard, writes, checked, basis, answer }: { guard: (checked: readonly Key[]) => void; writes: readonly ItemWrite[]; checked: { run: Key; kill: Key }; basis: StepBasis; answer: R },
): Maybe<R> {
  const all: ItemWrite[] = [
    ...writes,
    { key: checked.run, item: undefined, expected: engine.atVersion(basis.run) },
    { key: checked.kill, item: undefined, expected: basis.kill === null ? undefined : engine.atVersion(basis.kill) },
  ];
  const attempt = (tries: number): Maybe<R> => {
    // Each attempt authorized as the engine makes it (StorageLedger `guardStorage`): a Put, two ConditionChecks.
    guard([checked.run, checked.kill]);
    return andThen(engine.putChecked(all), (outcome) => {
      // The turn's other calls record beside this one, each checking the same two items: a
      // transaction of theirs in flight is no change, and this one goes again.
      if (outcome === 'conflict' && tries < CONFLICT_ATTEMPTS) return attempt(tries + 1);
      if (outcome !== 'written') throw new StepChangedError(`${writes.map(({ key }) => `${key.pk}/${key.sk}`).join(' and ')}, on ${checked.run.pk} and the global kill as handed`);
      return answer;
    });
  };
  return attempt(1);
}

/** The versions of the run item written and the kill item checked (absent: null), when the engine marks both. */
export function basisOf(engine: Pick<EngineVersions, 'versionOf'>, [run, kill]: readonly [Stored | undefined, Stored | undefined]): { basis?: StepBasis } {
  const runMark = run && engine.versionOf(run);
  const killMark = kill ? engine.versionOf(kill) : null;
  return runMark === undefined || killMark === undefined ? {} : { basis: { run: runMark, kill: killMark } };
}
