import { DescribeStateMachineForExecutionCommand, GetExecutionHistoryCommand, type HistoryEvent, type SFNClient } from '@aws-sdk/client-sfn';
import { deploymentClient, executionConsoleLink, type Deployment } from '../client/aws.js';
import type { AgentDefinition } from '../lambdas/define.js';
import type { Ledger } from '../lambdas/ledger/ledger.js';
import type { RunRecord } from '../lambdas/records/ledger-records.js';
import { localUser } from '../local/services/approval-api.js';
import type { AslDefinition } from '../local/template/asl.js';
import { linesFromEngine, statusFromLines, type HistoryAsk, type HistoryLine, type HistorySource } from './history.js';
import { startConsole, type ConsoleOptions, type ConsoleServer } from './server.js';

/**
 * `savepoint console --stack <name>`: the console on a deployed stack. It reads and steers with the
 * operator's own AWS credentials through the same client the CLI's `--stack` path uses
 * (client/aws.ts): runs and the ledger from DynamoDB, execution histories and the definition from
 * the Step Functions API, decisions through the IAM-signed approval API (recorded as the operator's
 * principal), kills in the ledger, resumes through StartExecution. It holds no approval-link or
 * decision key: what it may do is what the operator's IAM policy allows.
 */
export async function startStackConsole(
  deployment: Deployment,
  options: { agent?: AgentDefinition; pollMs?: number } & Pick<ConsoleOptions, 'host' | 'port' | 'token' | 'log' | 'actor'> = {},
): Promise<ConsoleServer> {
  const { agent, pollMs = 2_000, ...rest } = options;
  const { client, ledger, sfn, close } = deploymentClient(deployment, agent);
  try {
    const actor = rest.actor ?? (await operatorActor(sfn));
    const server = await startConsole({
      ...rest,
      actor,
      ledger,
      client,
      history: sfnHistorySource(sfn),
      definition: executionDefinition(sfn),
      subscribe: pollLedger(ledger, pollMs, rest.log),
      // A followed run's partition is queried on DynamoDB: as often as the runs list, not every 25 ms.
      runEventsPollMs: pollMs,
      canStart: true,
      agent: deployment.agentName,
      where: `stack ${deployment.stackName} (${deployment.region})`,
      executionLink: (arn) => executionConsoleLink(deployment.region, arn),
    });
    return { ...server, close: () => server.close().finally(close) };
  } catch (error) {
    close();
    throw error;
  }
}

/**
 * Who a kill or a global kill from this console is recorded as: the person and the access key that
 * wrote it (the ledger write itself is authorized, and logged by CloudTrail, as that key's principal).
 */
async function operatorActor(sfn: SFNClient): Promise<string> {
  const user = localUser();
  try {
    const { accessKeyId } = await sfn.config.credentials();
    return `${user} (${accessKeyId})`;
  } catch {
    return user; // no credentials: every AWS call will say so
  }
}

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED']);

/**
 * Execution histories from the Step Functions API. A finished execution's history is read once; a
 * running one's is brought up to date newest-first (`reverseOrder`) down to the newest event already
 * read, so a 20,000-event execution is paged through once, not on every refresh. A running
 * execution is asked again at most every `freshMs` (one page render asks several times) while its
 * run runs; once the asker says the run has ended (`runEnded`), what was read while it ran is read
 * again, up to its end (a page rendered within `freshMs` of the run's end showed it unfinished, a
 * handoff or the last states missing, until the next change). Concurrent asks share one read.
 */
export function sfnHistorySource(sfn: Pick<SFNClient, 'send'>, options: { freshMs?: number; now?: () => number } = {}): HistorySource {
  const freshMs = options.freshMs ?? 1_000;
  const now = options.now ?? Date.now;
  interface Entry {
    events: HistoryEvent[];
    lines: HistoryLine[];
    status?: string;
    readAt: number;
  }
  const cache = new Map<string, Entry>();
  const reading = new Map<string, Promise<Entry>>();

  const read = async (executionArn: string): Promise<Entry> => {
    const known = cache.get(executionArn);
    const newestId = known?.events.at(-1)?.id ?? 0;
    const newer: HistoryEvent[] = [];
    let nextToken: string | undefined;
    try {
      pages: do {
        const page = await sfn.send(new GetExecutionHistoryCommand({ executionArn, reverseOrder: true, maxResults: 1000, includeExecutionData: false, ...(nextToken && { nextToken }) }));
        for (const event of page.events ?? []) {
          if ((event.id ?? 0) <= newestId) break pages;
          newer.push(event);
        }
        nextToken = page.nextToken;
      } while (nextToken);
    } catch (error) {
      // A successor whose handoff is recorded but which has not started yet: nothing to show so far.
      if (error instanceof Error && error.name === 'ExecutionDoesNotExist') return { events: [], lines: [], readAt: now() };
      throw error;
    }
    const events = [...(known?.events ?? []), ...newer.reverse()];
    const lines = newer.length === 0 && known ? known.lines : linesFromEngine(executionArn, events);
    const status = statusFromLines(lines);
    const entry: Entry = { events, lines, ...(status && { status }), readAt: now() };
    cache.set(executionArn, entry);
    return entry;
  };

  const entryOf = (executionArn: string, ask: HistoryAsk = {}): Promise<Entry> => {
    const known = cache.get(executionArn);
    if (known && ((known.status && TERMINAL.has(known.status)) || (!ask.runEnded && now() - known.readAt < freshMs))) return Promise.resolve(known);
    let pending = reading.get(executionArn);
    if (!pending) {
      pending = read(executionArn).finally(() => reading.delete(executionArn));
      reading.set(executionArn, pending);
    }
    return pending;
  };

  return {
    linesOf: async (executionArn, ask) => (await entryOf(executionArn, ask)).lines,
    statusOf: async (executionArn, ask) => (await entryOf(executionArn, ask)).status,
  };
}

/** The definition a run's executions ran (with versions, not necessarily the state machine's latest), from its newest execution that exists. */
export function executionDefinition(sfn: Pick<SFNClient, 'send'>): (run: RunRecord) => Promise<AslDefinition | undefined> {
  const byExecution = new Map<string, AslDefinition>();
  return async (run) => {
    for (const executionArn of [...run.executions].reverse()) {
      const known = byExecution.get(executionArn);
      if (known) return known;
      try {
        const { definition } = await sfn.send(new DescribeStateMachineForExecutionCommand({ executionArn }));
        if (!definition) continue;
        const parsed = JSON.parse(definition) as AslDefinition;
        byExecution.set(executionArn, parsed);
        return parsed;
      } catch (error) {
        if (error instanceof Error && error.name === 'ExecutionDoesNotExist') continue;
        throw error;
      }
    }
    return undefined;
  };
}

/**
 * Live updates on AWS, where no engine tells this process what changed: the ledger is looked at
 * every `everyMs` (runs, pending approvals, the global kill) and a change is announced.
 */
export function pollLedger(ledger: Pick<Ledger, 'listRuns' | 'listPendingApprovals' | 'getGlobalKill'>, everyMs: number, log?: (line: string) => void): NonNullable<ConsoleOptions['subscribe']> {
  return (onChange) => {
    let last: string | undefined;
    let busy = false;
    const look = async () => {
      if (busy) return;
      busy = true;
      try {
        // A damaged run record is named by the run list itself; here it only counts as a change.
        const damaged: string[] = [];
        const [runs, pending, kill] = await Promise.all([ledger.listRuns(1000, { onDamaged: (runId) => damaged.push(runId) }), ledger.listPendingApprovals(), ledger.getGlobalKill()]);
        const seen = JSON.stringify([runs.map((run) => [run.runId, run.updatedAt, run.status, run.steps, run.executions.length]), damaged, pending.map((a) => a.approvalId), kill?.at ?? null]);
        if (last !== undefined && seen !== last) onChange();
        last = seen;
      } catch (error) {
        log?.(`console: looking for changes: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        busy = false;
      }
    };
    void look();
    const timer = setInterval(() => void look(), everyMs);
    timer.unref();
    return () => clearInterval(timer);
  };
}
