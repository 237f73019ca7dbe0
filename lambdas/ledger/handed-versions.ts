import type { CallClaim, EffectHolder, StepBasis, StepVersions, TurnSeen } from './ledger.js';
import { allOf, andThen, type Maybe } from './maybe.js';
import * as protocol from './protocol.js';
import { callKey, effectKey, GLOBAL_KILL, type Key, type Recorded, type Stored } from './protocol.js';
import type { ItemWrite, StorageCall } from './storage-call.js';
import { runKey, type EffectRecord, type KillFlag, type RunRecord, type ToolCallRecord, type TurnRecord } from '../records/ledger-records.js';
import { sameSecret } from '../shared/same-secret.js';
import { RecentMap } from '../shared/recent-map.js';

/**
 * A write on the versions a step's checks were made on (ledger.ts `StepVersions`): its own items
 * put, the run item and the global kill item only checked — ConditionChecks on those versions,
 * never a rewrite (a DynamoDB condition compares the seal attribute, not the content it covers: a
 * rewrite would seal over an alteration made behind the ledger's back; left alone, the next read
 * names it). The versions are handed (`StepBasis`; steps/handed-step.ts), or told by the step's own
 * read (StepRead `versions`). What was handed is sealed with its versions by the write that named
 * them (`seenWith`), under the ledger's seal key: a write holds only for that state, so a payload
 * made up by whoever may invoke the step is refused like a changed item; what a step read is the
 * ledger's own, and needs no seal. One write: any condition failed is the caller's to read and
 * decide on (StepChangedError).
 */

/**
 * A write given the versions its step's checks were made on found one of them changed, or its
 * record there already, or was given a state other than the one sealed with them: nothing was
 * written. The step reads, and decides again (steps/call-tool.ts). The same name on every engine,
 * and across the loopback ledger.
 */
export class StepChangedError extends Error {
  override readonly name = 'Ledger.StepChanged';
  constructor(what: string) {
    super(`the items a step was handed or read changed, or its record is there: ${what}`);
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
  /** The engine's seal (its ledger seal key) over what a step is handed: its versions and content (StepBasis `mac`). */
  seal(runId: string, sealed: { run: string; kill: string | null; content: unknown }): Maybe<string>;
}

/** The key a handed state's seal is made under (no item: a seal key apart from every item's). */
export const handedKey = (runId: string): Key => ({ pk: `HANDED#${runId}`, sk: 'HANDED' });

/**
 * What a step is handed with a basis, as sealed (StepBasis `mac`) and as given back to a write: the
 * run as written, the global kill flag (absent: none), the turn, as one JSON text. The seal covers
 * the text itself (no canonical form to work out on either side: the state machine carries the
 * text as a string, and the step parses the very text that was checked).
 */
export function handedContent(run: RunRecord, globalKill: KillFlag | undefined, turn: TurnRecord): string {
  return JSON.stringify({ run, ...(globalKill && { globalKill }), turn });
}

/** A storage engine as a write on handed versions uses it (StorageLedger `handedStore`). */
export interface HandedStore {
  readonly versions: EngineVersions;
  /** The check each storage call passes first (StorageLedger `guardStorage`). */
  guard(call: StorageCall): void;
  /** The item at `key` as the engine knows it without a request: remembered from its last read or write, else taken as absent. */
  known(key: Key): Maybe<Stored | undefined>;
  /** The item at `key` read now (a request on DynamoDB). */
  fresh(key: Key): Maybe<Stored | undefined>;
  /** The states found sealed (`sealedAsHanded`): the run, versions and seal each was found with, to its content (the latest `handedChecks`). */
  readonly sealed: RecentMap<string, string>;
}

/**
 * What a read call acted on checked against its seal (TurnLedger `recordCall` with a basis): the
 * state its turn's write sealed, or a StepChangedError (a state made up on the way). A read's record
 * is then written as any read's is, a conditional put of its own item: a read changes nothing
 * outside, so no condition on the run or kill item is worth a transaction with them, which each of
 * a turn's parallel reads (its own Lambda instance on AWS) would meet the others' in.
 */
export function sealedAsHanded(store: HandedStore, runId: string, basis: StepBasis): Maybe<void> {
  // The same state checked again (a call's check before it sends, then its write): its seal is not
  // computed twice. Found by the run, versions and seal given, the very same text beside them.
  const content = typeof basis.content === 'string' ? basis.content : undefined;
  const given = sealedKey(runId, basis);
  if (content !== undefined && store.sealed.get(given) === content) return;
  return andThen(store.versions.seal(runId, { run: basis.run, kill: basis.kill, content: basis.content }), (seal) => {
    if (content === undefined || !sameSecret(seal, basis.mac)) throw new StepChangedError(`run ${runId}: the state handed is not the one sealed with its versions`);
    store.sealed.set(given, content);
  });
}

/**
 * A ledger instance's memory of the states it found sealed (`HandedStore.sealed`): a call checks
 * its own twice, moments apart, and the calls of a turn check what the turn's write sealed (`seenWith`).
 */
export const handedChecks = (): RecentMap<string, string> => new RecentMap(64);

/** Where `HandedStore.sealed` keeps a state: by its run, the versions and the seal it was handed with. */
const sealedKey = (runId: string, basis: Pick<StepBasis, 'run' | 'kill' | 'mac'>): string => `${runId}\u0000${basis.run}\u0000${basis.kill}\u0000${basis.mac}`;

/** Whether `basis` was handed (sealed, with what the step's checks are made on), not told by the step's own read. */
const isHanded = (basis: StepBasis | StepVersions): basis is StepBasis => 'mac' in basis;

/**
 * A write call's claim on the versions its checks were made on (ToolCallLedger `claimCall` with a
 * basis), by the same rules as without them (protocol.ts `claimCall`, `claimCallEffect`): handed,
 * the call taken as absent (a record there fails the condition: the caller reads); read, the call
 * as the engine knows it, from that read or since (no request) — a retry takes over an expired
 * claim on them.
 * The effect as the engine knows it (a request only if a condition fails). A call or effect held
 * elsewhere writes nothing and answers its record, as without a basis (what the call does with it
 * is written on the same checks).
 */
export function claimOnBasis(store: HandedStore, call: ToolCallRecord, now: Date, effect: EffectHolder | undefined, basis: StepBasis | StepVersions): Maybe<CallClaim> {
  const key = callKey(call.runId, call.turn, call.call);
  const held = effect && effectKey(effect.key);
  const claimAs = (read: (key: Key) => Maybe<Stored | undefined>): Maybe<CallClaim> =>
    andThen(allOf([isHanded(basis) ? undefined : read(key), held && read(held)]), ([current, holding]) => {
      const step = effect
        ? protocol.claimCallEffect(current as Stored<ToolCallRecord> | undefined, holding as Stored<EffectRecord> | undefined, call, effect, now)
        : protocol.claimCall(current as Stored<ToolCallRecord> | undefined, call, now);
      if ('fail' in step) throw step.fail;
      if ('keep' in step) return step.keep as CallClaim;
      // The call's line before its effect's (the embedded log), as a claim without a basis writes them.
      const items = 'writes' in step ? step.writes : [step.write];
      const writes: ItemWrite[] = [{ key, item: items[0], expected: current }, ...(held ? [{ key: held, item: items[1], expected: holding }] : [])];
      return writeOnBasis(store, writes, call.runId, basis, step.answer as CallClaim);
    });
  if (isHanded(basis)) return claimAs(store.known);
  // On a read: the items the engine does not remember are taken as absent (a first claim), and a
  // refusal may be one of them in the way — the effect's record, written by another run of its
  // business key, or the call's, claimed elsewhere — not a change of the run or kill item. Read
  // both again and decide once more: an effect done elsewhere is then answered (writing nothing),
  // and a second refusal is the run or the kill changed (StepChangedError: the caller reads again).
  const readAgain = (error: unknown): Maybe<CallClaim> => {
    if (!isStepChanged(error)) throw error;
    return claimAs(store.fresh);
  };
  try {
    const claimed = claimAs(store.known);
    return claimed instanceof Promise ? claimed.catch(readAgain) : claimed;
  } catch (error) {
    return readAgain(error);
  }
}

/**
 * Puts `writes` (each on its own condition) with the run item of `runId` and the global kill item
 * checked on the versions `basis` names (kill null: the item absent); `answer` once written. A
 * handed basis is checked against its seal first.
 */
function writeOnBasis<R>(store: HandedStore, writes: readonly ItemWrite[], runId: string, basis: StepBasis | StepVersions, answer: R): Maybe<R> {
  const checked = [runKey(runId), GLOBAL_KILL];
  const all: ItemWrite[] = [
    ...writes,
    { key: checked[0]!, item: undefined, expected: store.versions.atVersion(basis.run) },
    { key: GLOBAL_KILL, item: undefined, expected: basis.kill === null ? undefined : store.versions.atVersion(basis.kill) },
  ];
  const attempt = (tries: number): Maybe<R> => {
    // Each attempt authorized as the engine makes it: a Put per item written, a ConditionCheck per item checked.
    const put = writes.filter((write) => write.item);
    store.guard({ put: put.map((write) => write.key), items: put.map((write) => write.item!) });
    store.guard({ check: checked });
    return andThen(store.versions.putChecked(all), (outcome) => {
      // The turn's other writes claim beside this one, each checking the same two items: a
      // transaction of theirs in flight is no change, and this one goes again.
      if (outcome === 'conflict' && tries < CONFLICT_ATTEMPTS) return attempt(tries + 1);
      if (outcome !== 'written') throw new StepChangedError(`${writes.map(({ key }) => `${key.pk}/${key.sk}`).join(' and ')}, on the run item and the global kill as ${isHanded(basis) ? 'handed' : 'read'}`);
      return answer;
    });
  };
  // The content the step used must be what a handed basis was sealed with: else nothing is written, as for a changed item.
  return isHanded(basis) ? andThen(sealedAsHanded(store, runId, basis), () => attempt(1)) : attempt(1);
}

/**
 * The versions of `run` and `kill` (absent: none) as the engine marks them, read or written;
 * undefined when it marks none of either (ledger.ts `StepVersions`).
 */
export function versionsOf(engine: Pick<EngineVersions, 'versionOf'>, run: Stored, kill: Stored | undefined): StepVersions | undefined {
  const runMark = engine.versionOf(run);
  const killMark = kill ? engine.versionOf(kill) : null;
  return runMark === undefined || killMark === undefined ? undefined : { run: runMark, kill: killMark };
}

/**
 * What a turn's write saw (TurnSeen): the run item as it wrote it (`run`), the global kill item as
 * it checked it or as the engine knew it (`kill`, absent: none), and their versions (`basis`: the
 * kill's null when absent), sealed with what its calls are handed — no basis when the engine marks
 * no version of either. The state sealed goes into `sealed` (the ledger's `HandedStore.sealed`), as
 * found sealed: its calls, when they check it on the same ledger (the local engine), do not make
 * its seal again (issue 38) — it is the seal just made, over that very content.
 */
export async function seenWith(engine: Pick<EngineVersions, 'versionOf' | 'seal'>, run: Stored, kill: Stored | undefined, turn: TurnRecord, sealed?: RecentMap<string, string>): Promise<TurnSeen> {
  const record = run.record as unknown as RunRecord;
  const globalKill = (kill?.record as { flag?: KillFlag } | undefined)?.flag;
  const seen = { run: record, ...(globalKill && { globalKill }) };
  const versions = versionsOf(engine, run, kill);
  if (!versions) return seen;
  const content = handedContent(record, globalKill, turn);
  const mac = await engine.seal(record.runId, { ...versions, content });
  const basis = { ...versions, mac, content };
  sealed?.set(sealedKey(record.runId, basis), content);
  return { ...seen, basis };
}
