import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { newestFirst } from '../../lambdas/records/run-order.js';

/** One agent's ledger, and the agents whose runs start there. */
export interface AgentLedger {
  readonly ledger: Ledger;
  /** The agents it runs (`savepoint serve --agent …`: one ledger each). @default none: it takes only the runs of agents no other ledger names */
  readonly agents?: readonly string[];
}

/**
 * How a call reaches the ledgers: `run` to the one that holds the run its first argument names (a
 * run id, or a record with one), `merge` to all of them (their lists joined, newest first),
 * `found` to each in turn until one has it, `every` to all of them, `first` to the first one.
 */
type Reach = 'run' | 'merge' | 'found' | 'every' | 'first';

/** Every method of `Ledger`, and how it reaches the agents' ledgers: a new method must say. */
const REACH = {
  // RunLedger
  createRun: 'run', getRun: 'run', prunedRun: 'found', listRuns: 'merge', listRunsOf: 'merge', attachExecution: 'run', recordRecovery: 'run', finishRun: 'run', listRunningRuns: 'merge', recordFork: 'run',
  // GuardLedger: the global kill stops every agent's runs; a breaker is its engine's (what a reader finds)
  killRun: 'run', getGlobalKill: 'found', setGlobalKill: 'every', recordGuardEvent: 'run', closeChildRun: 'run', countStep: 'run', applyBudgetExtension: 'run', getBreaker: 'found', saveBreaker: 'first',
  // TurnLedger
  recordTurn: 'run', getTurn: 'run', listConversation: 'run', loadStep: 'run',
  // ToolCallLedger
  getCall: 'run', claimCall: 'run', checkHanded: 'run', recordCall: 'run', completeCall: 'run', releaseCall: 'run', renewCall: 'run',
  // EffectLedger, AggregateLedger, EffectApprovalLedger: keyed by effect, found where it was written
  getEffect: 'found', putEffectBlob: 'first', getEffectBlob: 'found', reserveAggregate: 'first', getAggregate: 'found', shareApproval: 'first', getEffectApproval: 'found',
  // FleetLedger: a run's lease is its own ledger's; a day counter is found where it was written
  reserveInFleet: 'run', returnFleetLease: 'run', getFleetDay: 'found',
  // ApprovalLedger
  upsertApproval: 'run', getApproval: 'run', getBudgetApproval: 'run', findApproval: 'found', listPendingApprovals: 'merge', decideApproval: 'run', recordFirstApproval: 'run', getTaskToken: 'run', markDelivered: 'run',
  // ChildWaitLedger: a wait is its parent run's
  storeChildWait: 'run', getChildWait: 'run',
  // ExecutionRunLedger: keyed by execution, found where it was written
  noteExecutionRun: 'first', runOfExecution: 'found',
  // BlobStore
  putBlob: 'run', getBlob: 'run',
} as const satisfies Record<keyof Ledger, Reach>;

/**
 * The ledgers of several agents as one (`savepoint serve --agent a --agent b` keeps one per agent,
 * as a `DurableAgent` of its own has on AWS): what a reader of the state directory — `status`,
 * `runs`, `approvals`, the console — reads, so that it sees every agent's runs. A run's records
 * are read from (and its kill or decision written to) the ledger that holds the run; a new run
 * goes to the ledger of its agent; lists are every ledger's, joined.
 */
export function agentLedgers(parts: readonly AgentLedger[]): Ledger {
  if (parts.length === 0) throw new Error('agentLedgers: no ledger');
  const ledgers = parts.map((part) => part.ledger);
  const held = new Map<string, Ledger>();

  /** The ledger that holds the run; for a run no ledger holds, the one of its agent (or the first). */
  const holderOf = async (runId: string, agent: string | undefined): Promise<Ledger> => {
    const known = held.get(runId);
    if (known) return known;
    for (const ledger of ledgers) {
      if (await ledger.getRun(runId)) {
        held.set(runId, ledger);
        return ledger;
      }
    }
    return parts.find((part) => agent !== undefined && part.agents?.includes(agent))?.ledger ?? parts.find((part) => !part.agents)?.ledger ?? ledgers[0]!;
  };

  const call = (ledger: Ledger, method: keyof Ledger, args: unknown[]) => (ledger[method] as (...a: unknown[]) => Promise<unknown>).apply(ledger, args);

  const reach = async (method: keyof Ledger, args: unknown[]): Promise<unknown> => {
    switch (REACH[method]) {
      case 'run': {
        const first = args[0] as string | { runId: string; agent?: string };
        const holder = typeof first === 'string' ? await holderOf(first, undefined) : await holderOf(first.runId, first.agent);
        return call(holder, method, args);
      }
      case 'merge': {
        const lists = (await Promise.all(ledgers.map((ledger) => call(ledger, method, args)))) as { createdAt?: string; runId: string }[][];
        const joined = lists.flat();
        if (method === 'listPendingApprovals') return joined;
        // Runs, newest first; as many as one ledger was asked for.
        const limit = method === 'listRunningRuns' ? undefined : (args[method === 'listRunsOf' ? 1 : 0] as number | undefined);
        const sorted = (joined as { createdAt: string; runId: string }[]).sort(newestFirst);
        return limit === undefined ? sorted : sorted.slice(0, limit);
      }
      case 'found': {
        // An empty list (no chunks of an effect's blob) is not found either: the next ledger may hold it.
        let value: unknown;
        for (const ledger of ledgers) {
          value = await call(ledger, method, args);
          if (value !== undefined && !(Array.isArray(value) && value.length === 0)) return value;
        }
        return value;
      }
      case 'every':
        for (const ledger of ledgers) await call(ledger, method, args);
        return undefined;
      case 'first':
        return call(ledgers[0]!, method, args);
    }
  };

  return Object.fromEntries((Object.keys(REACH) as (keyof Ledger)[]).map((method) => [method, (...args: unknown[]) => reach(method, args)])) as unknown as Ledger;
}
