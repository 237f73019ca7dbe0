import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { resolveResults } from '../../lambdas/ledger/blobs.js';
import { approvalSkOf, BUDGET_FIELDS, type ApprovalRecord, type BudgetGuard, type RunConfig, type RunRecord, type ToolCallRecord, type TurnRecord } from '../../lambdas/records/ledger-records.js';
import type { Clock } from '../../lambdas/shared/ports.js';
import { extendedLimit } from '../../lambdas/steps/budget-check.js';

/**
 * A finished run as its ledger recorded it: the observation log replay answers every call from.
 * Tool results stored by reference (ledger/blobs.ts) are read back whole.
 */
export interface Recording {
  run: RunRecord;
  turns: TurnRecord[];
  calls: ToolCallRecord[];
  approvals: ApprovalRecord[];
}

export async function loadRecording(ledger: Ledger, runId: string): Promise<Recording | undefined> {
  const run = await ledger.getRun(runId);
  if (!run) return undefined;
  const { turns, calls, approvals } = await ledger.listConversation(runId);
  return { run, turns, calls: await resolveResults(ledger, calls), approvals };
}

/**
 * The budgets the run started with. Its record holds them as its approved extensions left them: a
 * replay started on those would be refused by StartRun where they are above the most a run of the
 * agent may ask for, and elsewhere never trip where the recorded run did (no extension asked). Each
 * extended budget goes back to the limit it started with, as the record keeps it; on a record
 * written before it kept them, to the one limit that the first extension's recorded limit extends
 * (`extendedLimit` is increasing, by more than 1 a whole number and 1 cent a cent: whole steps,
 * tokens and seconds are found exactly, dollars when they were whole cents).
 */
export function startConfig(recording: Recording): RunConfig {
  const { run } = recording;
  const config: RunConfig = { ...run.config };
  for (const [guard, count] of Object.entries(run.budgetExtensions ?? {})) {
    if (guard === 'loop' || !count) continue;
    const field = BUDGET_FIELDS[guard as BudgetGuard];
    const kept = run.budgetsBeforeExtension?.[field];
    const first = recording.approvals.find((approval) => approval.budget?.guard === guard && approval.budget.extension === 1)?.budget?.limit;
    const found = kept ?? (first === undefined ? undefined : limitExtendedTo(run, guard as BudgetGuard, first));
    if (found !== undefined) config[field] = found;
  }
  return config;
}

/** The limit of `guard` whose extension is `limit`, on its grid (whole numbers; cents for dollars); undefined if none is. */
function limitExtendedTo(run: RunRecord, guard: BudgetGuard, limit: number): number | undefined {
  const grid = guard === 'dollars' ? 100 : 1;
  const near = Math.round((limit / (1 + run.config.budgetExtensionPercent / 100)) * grid);
  for (const units of [near, near - 1, near + 1]) {
    const candidate = units / grid;
    if (candidate > 0 && extendedLimit({ ...run, config: { ...run.config, [BUDGET_FIELDS[guard]]: candidate } }, guard) === limit) return candidate;
  }
  return undefined;
}

export const callOf = (recording: Recording, turn: number, call: number) => indexed(recording.calls, (record) => `${record.turn}:${record.call}`).get(`${turn}:${call}`);
export const approvalOf = (recording: Recording, key: Pick<ApprovalRecord, 'turn' | 'call' | 'budget'>) => indexed(recording.approvals, approvalSkOf).get(approvalSkOf(key));

/**
 * The records of a list by key, the first of each key (as a search from the start finds it), built
 * once per list: a replay looks up every call and approval, each of a run of hundreds.
 */
function indexed<T extends object>(records: readonly T[], keyOf: (record: T) => string): Map<string, T> {
  let index = indexes.get(records) as Map<string, T> | undefined;
  if (index === undefined) {
    index = new Map();
    for (const record of records) if (!index.has(keyOf(record))) index.set(keyOf(record), record);
    indexes.set(records, index);
  }
  return index;
}
const indexes = new WeakMap<readonly object[], Map<string, object>>();

/**
 * The timers of a replay's clocks: none fires. What a step arms a timer for — a tool's timeout, the
 * wall-clock watch during a call, a lease's renewal — is answered from the recording or not needed:
 * a call is answered at once with its recorded outcome (a timeout or a cut the run met included:
 * answers.ts `recordedOutcome`), a limit already passed is seen as the timer is armed (the clock reads
 * the recorded time), and nothing else holds a replay's leases. On real timers (a clock without
 * `after`: lambdas/shared/ports.ts) a replay armed three for each tool call and cancelled them, and on
 * a machine slow enough a lease's renewal (every third of a second) wrote to the replay's ledger
 * in the middle of a call: what a replay does no longer depends on how fast it runs.
 */
const unarmed = (): (() => void) => disarm;
const disarm = (): void => undefined;

/** A moment of the recorded run, and the write of the replay that reproduces it. */
type Moment = { key: string; at: number };

/** The recorded clock of a replay: `passed` is told of each reproducing write, `reached` waits for a moment's turn. */
export interface RecordedClock extends Clock {
  passed(key: string): void;
  /** Resolves once every moment recorded before `key`'s has been reproduced (at once for a key not recorded). */
  reached(key: string): Promise<void>;
  /**
   * The clock of what reproduces the recorded moment `key` (an approval asked or decided, `asked:`
   * or `decided:` and its key): it reads that moment's recorded time. For a key not recorded, this clock.
   */
  at(key: string): Clock;
  /** Whether every recorded moment has been reproduced. */
  allPassed(): boolean;
}

/**
 * The recorded run's clock. `now()` is the time the recording says the earliest thing not yet
 * reproduced by the replay happened: the start of a model turn or tool call, the request or
 * decision of an approval (`passed` is told of each reproducing write). So every step of the
 * replay reads the time its recorded counterpart read: the budget notes the model is sent ("… 212
 * min left") and the wall-clock guard come out the same, with no real time involved.
 *
 * The moments are in the order of their recorded times, not of turns and calls: the calls of one
 * turn run side by side, and an approval asked for first may be decided last. What only a person
 * caused (a decision) is reproduced at its turn: the replay waits with it (`reached`) until every
 * earlier moment has been reproduced, so it reads its own time and the others theirs.
 *
 * An approval's request and decision read their own recorded times (`at`), whatever the replay's
 * branches have reproduced by then: the times they write make the run's time waiting for people
 * (approvals/decision.ts `countWait`), which every later turn's budget note reads. The earliest
 * moment not yet reproduced is not theirs when the turn's other calls started before the request
 * (as a loaded engine's do) and the replay has not finished them yet: a request taken as asked
 * then made the wait longer than recorded, and a later note one minute off ("240 min" for "239").
 * A budget extension's request and decision (no turn's moments) read theirs the same way.
 */
export function recordedClock(recording: Recording): RecordedClock {
  const created = Date.parse(recording.run.createdAt);
  const moments: Moment[] = [{ key: 'run', at: created }];
  // Nothing the run reproduces came before it started: a fork's copied turns (recorded by its
  // parent, earlier) are reproduced when its StartRun copies them.
  const start = (record: { recordedAt?: string; latencyMs?: number }) => Math.max(created, Date.parse(record.recordedAt ?? recording.run.createdAt) - (record.latencyMs ?? 0));
  const callsOf = new Map<number, ToolCallRecord[]>();
  for (const call of recording.calls) {
    const group = callsOf.get(call.turn);
    if (group) group.push(call);
    else callsOf.set(call.turn, [call]);
  }
  for (const turn of recording.turns) {
    moments.push({ key: `turn:${turn.turn}`, at: start(turn) });
    for (const call of callsOf.get(turn.turn) ?? []) {
      const approval = approvalOf(recording, call);
      if (approval) {
        moments.push({ key: `asked:${approvalSkOf(approval)}`, at: Math.max(created, Date.parse(approval.createdAt)) });
        if (approval.decidedAt) moments.push({ key: `decided:${approvalSkOf(approval)}`, at: Math.max(created, Date.parse(approval.decidedAt)) });
      }
      moments.push({ key: `call:${call.turn}:${call.call}`, at: start(call) });
    }
  }
  // Stable: moments at the same time keep the order of the run (a turn before its calls, an
  // approval asked before it is decided before its call).
  moments.sort((a, b) => a.at - b.at);
  const done = new Set<string>();
  const waiting: { at: number; resolve: () => void }[] = [];
  const end = Date.parse(recording.run.finishedAt ?? recording.run.updatedAt);
  let next = 0;
  const current = () => moments[next]?.at ?? end;
  // Every approval's recorded request and decision, budget extensions' included: what `at` reads.
  const approvalMoments = new Map<string, number>();
  for (const approval of recording.approvals) {
    if (approvalMoments.has(`asked:${approvalSkOf(approval)}`)) continue; // the first of a key, as approvalOf finds it
    approvalMoments.set(`asked:${approvalSkOf(approval)}`, Math.max(created, Date.parse(approval.createdAt)));
    if (approval.decidedAt) approvalMoments.set(`decided:${approvalSkOf(approval)}`, Math.max(created, Date.parse(approval.decidedAt)));
  }
  const wake = () => {
    // Most moments pass with nothing waiting for them (a wait is an approval's decision).
    if (waiting.length === 0) return;
    for (const waiter of [...waiting]) {
      if (waiter.at > current()) continue;
      waiting.splice(waiting.indexOf(waiter), 1);
      waiter.resolve();
    }
  };
  const clock: RecordedClock = {
    now: () => new Date(current()),
    after: unarmed,
    passed(key) {
      done.add(key);
      while (next < moments.length && done.has(moments[next]!.key)) next += 1;
      wake();
    },
    reached(key) {
      const moment = moments.find((candidate) => candidate.key === key);
      if (!moment || moment.at <= current()) return Promise.resolve();
      return new Promise<void>((resolve) => waiting.push({ at: moment.at, resolve }));
    },
    at(key) {
      const at = approvalMoments.get(key);
      return at === undefined ? clock : { now: () => new Date(at), after: unarmed };
    },
    allPassed: () => next >= moments.length,
  };
  return clock;
}
