import type { AgentDefinition, DevWorld } from '../../lambdas/define.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { ApprovalRecord } from '../../lambdas/records/ledger-records.js';
import type { ApprovalRequested } from '../../lambdas/approvals/notify.js';
import { summarizeHistory } from '../../local/engine/local-engine.js';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../local/runtime/local-stack.js';
import { apiGatewayEvent } from '../../local/services/approval-api.js';
import { lambdaContext } from '../../local/services/lambda-context.js';
import { approvalApiDecider, createClient, type SavepointClient } from '../../client/ledger-client.js';

/**
 * An agent on the whole local stack (the synthesized definition on the in-process engine, the
 * simulated model, the agent's world) for a test: it records the approvals asked for, runs an
 * execution to its end with its history, and wakes `waitFor` probes on every engine event and
 * ledger write. The per-agent harnesses (refund-harness.ts, triage-harness.ts) are thin over it.
 */

export interface AgentHarness<World extends DevWorld> {
  stack: LocalStack<World>;
  /** Approvals in the order they were asked for. */
  approvals: ApprovalRecord[];
  /** The approval-requested events, in order (with a signed link per approver). */
  requested: ApprovalRequested[];
  /** Starts an execution with `input` and waits until it stops. */
  run(input: unknown, name?: string): Promise<Finished>;
  /**
   * Starts a run through the runs API (`POST /runs`) as `principal` — the caller API Gateway
   * verified, on AWS — and waits until its execution stops. A refused request throws its answer.
   */
  startAs(principal: string, body: Record<string, unknown>): Promise<Finished>;
  /** Decides an approval through the approval API's handler as `principal` (an IAM ARN, as API Gateway verified it). */
  decideAs(principal: string, approvalId: string, body: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown> }>;
}

export type Finished = Awaited<ReturnType<LocalStack['engine']['waitForExecution']>> & {
  history: ReturnType<LocalStack['engine']['getExecutionHistory']>;
  states: ReturnType<typeof summarizeHistory>;
};

export interface AgentHarnessOptions<World extends DevWorld> extends Partial<LocalStackOptions<World>> {
  readonly agent: AgentDefinition<any, any, World>;
  /** A world the harness started for the test: the stack runs it (unless `world` names another) and closes it. */
  readonly ownedWorld?: World;
  /** Called after each approval asked for is recorded (e.g. to decide it at once). */
  readonly onAsked?: (approval: ApprovalRecord, stack: LocalStack<World>) => void;
}

export async function startAgentHarness<World extends DevWorld>(options: AgentHarnessOptions<World>): Promise<AgentHarness<World>> {
  const { ownedWorld, onAsked, ...rest } = options;
  const approvals: ApprovalRecord[] = [];
  const requested: ApprovalRequested[] = [];
  let stack: LocalStack<World>;
  try {
    const started = await startLocalStack<World>({
      retryDelayMs: 1,
      onApproval: (approval, event) => {
        approvals.push(approval);
        requested.push(event);
        wake();
        onAsked?.(approval, stack);
      },
      ...(ownedWorld && { world: ownedWorld }),
      ...rest,
      decorateLedger: (ledger) => wakingLedger(rest.decorateLedger ? rest.decorateLedger(ledger) : ledger),
    });
    const unwatch = wakeOnEngineEvents(started.engine);
    let closed: Promise<void> | undefined;
    stack = { ...started, close: () => (closed ??= started.close().then(() => ownedWorld?.close()).then(unwatch)) };
  } catch (error) {
    await ownedWorld?.close();
    throw error;
  }
  let runs = 0;
  return {
    stack,
    approvals,
    requested,
    run: async (input, name = `test-${++runs}`) => {
      const { executionArn } = stack.engine.startExecution({ name, input });
      const description = await stack.engine.waitForExecution(executionArn);
      const history = stack.engine.getExecutionHistory(executionArn);
      return { ...description, history, states: summarizeHistory(history) };
    },
    decideAs: async (principal, approvalId, body) => {
      const answer = await stack.approvalApi(apiGatewayEvent({ method: 'POST', route: 'approvals', approvalId, body: JSON.stringify(body), principal }), lambdaContext('ApprovalCallback', 20_000));
      return { status: answer.statusCode, body: JSON.parse(answer.body) as Record<string, unknown> };
    },
    startAs: async (principal, body) => {
      const answer = await stack.runsApi(apiGatewayEvent({ method: 'POST', route: 'runs', body: JSON.stringify(body), principal }), lambdaContext('RunsApi', 20_000));
      if (answer.statusCode !== 202) throw new Error(`runs API answered ${answer.statusCode}: ${answer.body}`);
      const { executionArn } = JSON.parse(answer.body) as { executionArn: string };
      const description = await stack.engine.waitForExecution(executionArn);
      const history = stack.engine.getExecutionHistory(executionArn);
      return { ...description, history, states: summarizeHistory(history) };
    },
  };
}

/** POSTs a decision to the local approval API, the route API Gateway serves on AWS. */
export async function postDecision(stack: Pick<LocalStack, 'endpoints'>, approvalId: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${stack.endpoints.approvals}/${approvalId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/**
 * Resolves with the first value of `probe` other than undefined, null or false. No timer and no
 * polling: the probe is checked now, and again after each event of a watched engine (a state
 * entered, a task done, an execution started or ended) and each approval a harness is told of
 * (`wake`) — what a probe waits for is the engine's doing. A wait that never ends is bounded by
 * the test's own timeout.
 */
export async function waitFor<T>(probe: () => T | Promise<T>): Promise<Exclude<T, undefined | null | false>> {
  for (;;) {
    // Listening before probing: what happens while an async probe runs is not missed.
    let wakeThis!: () => void;
    const woken = new Promise<void>((resolve) => (wakeThis = resolve));
    waiters.add(wakeThis);
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value as Exclude<T, undefined | null | false>;
      await woken;
    } finally {
      waiters.delete(wakeThis);
    }
  }
}

const waiters = new Set<() => void>();

/** Something a `waitFor` probe may be waiting for happened: every waiter checks again. */
export function wake(): void {
  for (const waiter of [...waiters]) waiter();
}

/**
 * The ledger, waking the `waitFor` waiters after each write that succeeds: what a probe reads can
 * also change outside any execution (a recovery refused, an approval expired). Reads do not wake:
 * a probe reading the ledger would wake itself.
 */
export function wakingLedger(ledger: Ledger): Ledger {
  return new Proxy(ledger, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      // Bound to the ledger itself: its own inner calls are not the caller's reads or writes.
      if (READS.test(property)) return (value as (...args: unknown[]) => unknown).bind(target);
      return (...args: unknown[]) => {
        const result = (value as (...args: unknown[]) => unknown).apply(target, args);
        void Promise.resolve(result).then(wake, () => undefined);
        return result;
      };
    },
  });
}

const READS = /^(get|list|load|find)[A-Z]/;

/** Every event of `engine` wakes the `waitFor` waiters; returns the unsubscribe. */
export function wakeOnEngineEvents(engine: Pick<LocalStack['engine'], 'on'>): () => void {
  return engine.on(() => wake());
}

/** POSTs a decision through a signed link, as the approval page does. */
export async function postLinkDecision(url: string, body: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
  const link = new URL(url);
  const response = await fetch(`${link.origin}${link.pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, link: link.searchParams.get('link') }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/**
 * The client of a local stack's runs, as an application on the machine has it: its ledger, its
 * Step Functions, decisions through its approval API, its agent; polls paced by `setImmediate`.
 */
export function stackClient(stack: Pick<LocalStack, 'ledger' | 'sfn' | 'stateMachineArn' | 'endpoints' | 'agent'>): SavepointClient {
  const pause = () => new Promise<void>((resolve) => setImmediate(resolve));
  return createClient({ ledger: stack.ledger, sfn: stack.sfn, stateMachineArn: stack.stateMachineArn, decide: approvalApiDecider(stack.endpoints.approvals), agent: stack.agent, pause });
}
