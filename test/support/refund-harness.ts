import { readFileSync } from 'node:fs';
import { refundReconciler, startRefundWorld, type RefundWorld } from '../../agents/refund-reconciler/agent.js';
import { Day } from '../../agents/refund-reconciler/domain.js';
import { summarizeHistory } from '../../local/engine.js';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../local/runtime.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { ApprovalRecord } from '../../lambdas/ledger/records.js';
import type { ApprovalRequested } from '../../lambdas/approvals/notify.js';

export const sampleDay = Day.parse(JSON.parse(readFileSync(new URL('../../agents/refund-reconciler/sample-day.json', import.meta.url), 'utf8')));
export const scheduledEvent = JSON.parse(readFileSync(new URL('../../events/scheduled-event.json', import.meta.url), 'utf8')) as Record<string, unknown>;

export interface Harness {
  stack: LocalStack<RefundWorld>;
  approvals: ApprovalRecord[];
  /** The approval-requested events, in order (with a signed link per approver). */
  requested: ApprovalRequested[];
  /** Starts an execution with `input` and waits until it stops. */
  run(input: unknown, name?: string): Promise<Finished>;
}

export type Finished = Awaited<ReturnType<LocalStack['engine']['waitForExecution']>> & {
  history: ReturnType<LocalStack['engine']['getExecutionHistory']>;
  states: ReturnType<typeof summarizeHistory>;
};

/** The refund reconciler's run input for the sample day. */
export const sampleInput = { date: sampleDay.date };

/** The whole local stack (synthesized definition, engine, dynalite in memory, simulated services) running the refund reconciler. */
export async function startHarness(options: Partial<LocalStackOptions<RefundWorld>> & { day?: Day } = {}): Promise<Harness> {
  const approvals: ApprovalRecord[] = [];
  const requested: ApprovalRequested[] = [];
  const { day, ...rest } = options;
  // A day of its own: the provider serves it (and closes with the stack).
  const world = day && (await startRefundWorld({ day, failRate: options.failRate ?? 0, seed: options.seed ?? 1, now: () => new Date() }));
  const started = await startLocalStack<RefundWorld>({
    agent: refundReconciler,
    retryDelayMs: 1,
    onApproval: (approval, event) => {
      approvals.push(approval);
      requested.push(event);
      wake();
    },
    ...(world && { world }),
    ...rest,
    decorateLedger: (ledger) => wakingLedger(rest.decorateLedger ? rest.decorateLedger(ledger) : ledger),
  });
  const unwatch = wakeOnEngineEvents(started.engine);
  let closed: Promise<void> | undefined;
  const stack = { ...started, close: () => (closed ??= started.close().then(() => world?.close()).then(unwatch)) };
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

/** Refund request ids paid more than once by the provider (must always be empty). */
export function duplicatePayments(stack: LocalStack<RefundWorld>): string[] {
  const seen = new Map<string, number>();
  for (const refund of stack.world.payments.refunds()) seen.set(refund.refundRequestId, (seen.get(refund.refundRequestId) ?? 0) + 1);
  return [...seen].filter(([, count]) => count > 1).map(([id]) => id);
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
