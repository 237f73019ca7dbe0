import type { AgentDefinition } from '../lambdas/define.js';
import type { Ledger } from '../lambdas/ledger/ledger.js';
import type { RunRecord } from '../lambdas/records/ledger-records.js';
import type { ReplayResult } from '../local/replay/index.js';
import { counted } from '../lambdas/shared/text.js';

/**
 * `savepoint replay --all`: every finished or stopped run of the ledger replayed on this code, one
 * after another in one process, as a check before a change is deployed (the recorded runs of
 * production, with `--stack`, or of a state directory): a run whose replay diverges, or that could
 * not be replayed here, fails the check. The command's wiring is cli/commands/replay.ts; this is
 * the walk over the runs, with what it reads and runs given to it.
 */

/** The most runs `replay --all` reads from the ledger, newest first; more are said to be left out. */
export const MAX_REPLAYED_RUNS = 10_000;

export interface ReplayAllDeps {
  readonly ledger: Pick<Ledger, 'listRuns' | 'listRunsOf'>;
  /** The code a run of the agent of this name is replayed on; undefined when it is not here. */
  readonly agentNamed: (name: string) => Promise<AgentDefinition<any, any, any> | undefined>;
  /** One run replayed on `agent` (local/replay `replayRun`). */
  readonly replay: (agent: AgentDefinition<any, any, any>, runId: string) => Promise<ReplayResult>;
  /** `--agent`: only the runs of this agent, replayed on it. */
  readonly agent?: AgentDefinition<any, any, any>;
  /** `--since`: only runs created on or after this day (YYYY-MM-DD). */
  readonly since?: string;
  /** Called as each run is done, in order, before the next starts (progress on a long check). */
  readonly onRun?: (outcome: ReplayOutcome) => void;
  /** Called once the runs are listed, before the first replay, with those it will replay. */
  readonly onListed?: (replaying: readonly RunRecord[]) => void;
}

/** What became of one run: its replay's result, or why it was not replayed. */
export type ReplayOutcome = { readonly result: ReplayResult } | { readonly notReplayed: NotReplayed };

export interface NotReplayed {
  readonly runId: string;
  readonly agent: string;
  readonly why: string;
}

export interface ReplayAllResult {
  /** `--agent`'s name: only its runs were listed. */
  readonly agent?: string;
  /** Each run replayed, newest first. */
  readonly runs: ReplayResult[];
  /** Runs that could not be replayed here: no code for their agent, or a replay that failed. */
  readonly notReplayed: NotReplayed[];
  /** Runs still running, left out: a replay needs a run that has ended. */
  readonly running: string[];
  /** Runs whose record fails verification, left out (`savepoint verify <runId>` says what). */
  readonly damaged: { runId: string; error: string }[];
  /** More runs than MAX_REPLAYED_RUNS: the oldest were left out. */
  readonly more: boolean;
  readonly identical: number;
  readonly diverged: number;
  /** Every run listed replayed identical, none left out for damage or want of code. */
  readonly ok: boolean;
}

export async function replayAll(deps: ReplayAllDeps): Promise<ReplayAllResult> {
  const damaged: ReplayAllResult['damaged'] = [];
  const onDamaged = (runId: string, error: Error) => void damaged.push({ runId, error: error.message });
  const listed = deps.agent ? await deps.ledger.listRunsOf(deps.agent.name, MAX_REPLAYED_RUNS + 1, { onDamaged }) : await deps.ledger.listRuns(MAX_REPLAYED_RUNS + 1, { onDamaged });
  // The run past the limit is one that was left out, unless --since would have left it out anyway.
  const more = listed.length > MAX_REPLAYED_RUNS && (deps.since === undefined || listed[MAX_REPLAYED_RUNS]!.createdAt >= deps.since);
  const inRange = listed.slice(0, MAX_REPLAYED_RUNS).filter((run) => deps.since === undefined || run.createdAt >= deps.since);
  const running = inRange.filter((run) => run.status === 'running').map((run) => run.runId);
  const ended = inRange.filter((run) => run.status !== 'running');
  deps.onListed?.(ended);
  const runs: ReplayResult[] = [];
  const notReplayed: NotReplayed[] = [];
  const agents = new Map<string, Promise<AgentDefinition<any, any, any> | undefined>>();
  for (const run of ended) {
    const outcome = await replayOne(deps, run, agents);
    if ('result' in outcome) runs.push(outcome.result);
    else notReplayed.push(outcome.notReplayed);
    deps.onRun?.(outcome);
  }
  const identical = runs.filter((result) => result.identical).length;
  return { ...(deps.agent && { agent: deps.agent.name }), runs, notReplayed, running, damaged, more, identical, diverged: runs.length - identical, ok: identical === runs.length && notReplayed.length === 0 && damaged.length === 0 };
}

async function replayOne(deps: ReplayAllDeps, run: RunRecord, agents: Map<string, Promise<AgentDefinition<any, any, any> | undefined>>): Promise<ReplayOutcome> {
  const notReplayed = (why: string): ReplayOutcome => ({ notReplayed: { runId: run.runId, agent: run.agent, why } });
  // One run that cannot be replayed (its agent's code does not load, its records changed meanwhile,
  // pruned) does not end the check of the others.
  const message = (error: unknown) => (error instanceof Error ? error.message : String(error));
  let agent = deps.agent;
  if (!agent) {
    // Each agent's code loaded once, for all its runs.
    if (!agents.has(run.agent)) agents.set(run.agent, deps.agentNamed(run.agent));
    try {
      agent = await agents.get(run.agent)!;
    } catch (error) {
      return notReplayed(`the code of agent ${run.agent} does not load: ${message(error)}`);
    }
  }
  if (!agent) return notReplayed(`no code for agent ${run.agent} here: replay its runs with --agent <its module>`);
  try {
    return { result: await deps.replay(agent, run.runId) };
  } catch (error) {
    return notReplayed(message(error));
  }
}

/** The check's last line: how many runs replayed identical, and what kept it from passing. */
export function replayAllSummary(result: ReplayAllResult): string {
  const replayed = result.runs.length + result.notReplayed.length;
  const of = result.agent ? ` of agent ${result.agent}` : '';
  const parts = [replayed === 0 ? `no ${result.running.length > 0 ? 'ended ' : ''}runs${of} to replay` : `${result.identical} of ${counted(replayed, 'run')}${of} replayed identical`];
  if (result.diverged > 0) parts.push(`${result.diverged} diverged`);
  if (result.notReplayed.length > 0) parts.push(`${result.notReplayed.length} not replayed`);
  if (result.damaged.length > 0) parts.push(`${counted(result.damaged.length, 'damaged run')} left out`);
  if (result.running.length > 0) parts.push(`${result.running.length} still running, left out`);
  if (result.more) parts.push(`only the newest ${MAX_REPLAYED_RUNS} read: --since narrows them`);
  return parts.join('; ');
}
