import { startTriageWorld, supportTriage, SAMPLE_INBOX, loadInbox, type TriageWorld } from '../../agents/support-triage/agent.js';
import { KEY_HEADER, type Inbox } from '../../agents/support-triage/domain.js';
import type { MailServerOptions } from '../../agents/support-triage/sim/mail-server.js';
import type { AgentDefinition } from '../../lambdas/define.js';
import type { ApprovalRecord } from '../../lambdas/ledger/records.js';
import { summarizeHistory } from '../../local/engine.js';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../local/runtime.js';
import { postDecision, wake, waitFor, wakeOnEngineEvents, wakingLedger } from './refund-harness.js';

/**
 * The support-triage agent on the whole local stack (the synthesized definition on the in-process
 * engine, dynalite in memory, the simulated model), with its world started here so a test can
 * hand it an inbox and the mail provider's faults. Shaped like test/engine/harness.ts.
 */

export const sampleInbox = loadInbox(SAMPLE_INBOX);
export const sampleInput = { inbox: sampleInbox.inbox };

export interface TriageHarness {
  stack: LocalStack<TriageWorld>;
  /** Approvals in the order they were asked for. */
  approvals: ApprovalRecord[];
  /** Starts an execution with `input` and waits until it stops. */
  run(input: unknown, name?: string): Promise<Finished>;
  /** Decisions posted by `decide` (awaited before a test checks what they did). */
  decisions: Promise<unknown>[];
  /**
   * Runs the ExpireApprovals step now, as the runtime's deadline timer does at a deadline: a test
   * that moves its clock past a deadline calls this instead of waiting for a real timer or a sweep.
   */
  expireDue(): Promise<{ expired: string[] }>;
}

export type Finished = Awaited<ReturnType<LocalStack['engine']['waitForExecution']>> & {
  history: ReturnType<LocalStack['engine']['getExecutionHistory']>;
  states: ReturnType<typeof summarizeHistory>;
};

export interface TriageHarnessOptions extends Partial<Omit<LocalStackOptions<TriageWorld>, 'world'>>, Pick<MailServerOptions, 'dropSendResponses' | 'onRequest'> {
  inbox?: Inbox;
  /** Decide every approval this way through the approval API as soon as it is asked for. */
  decide?: 'approve' | 'reject';
}

export async function startTriage(options: TriageHarnessOptions = {}): Promise<TriageHarness> {
  const { inbox, dropSendResponses, onRequest, decide, ...rest } = options;
  const approvals: ApprovalRecord[] = [];
  const decisions: Promise<unknown>[] = [];
  const clock = options.clock;
  const world = await startTriageWorld({
    inbox: inbox ?? sampleInbox,
    failRate: options.failRate ?? 0,
    seed: options.seed ?? 1,
    now: () => (clock ? clock.now() : new Date()),
    dropSendResponses,
    onRequest,
  });
  let stack: LocalStack<TriageWorld>;
  try {
    const started = await startLocalStack<TriageWorld>({
      agent: supportTriage as AgentDefinition<any, any, TriageWorld>,
      retryDelayMs: 1,
      world,
      onApproval: (approval) => {
        approvals.push(approval);
        wake();
        if (decide) decisions.push(postDecision(stack, approval.approvalId, { decision: decide, reason: `test: ${decide}` }));
      },
      ...rest,
      decorateLedger: (ledger) => wakingLedger(rest.decorateLedger ? rest.decorateLedger(ledger) : ledger),
    });
    const unwatch = wakeOnEngineEvents(started.engine);
    let closed: Promise<void> | undefined;
    stack = { ...started, close: () => (closed ??= started.close().then(() => world.close()).then(unwatch)) };
  } catch (error) {
    await world.close();
    throw error;
  }
  let runs = 0;
  return {
    stack,
    approvals,
    decisions,
    expireDue: () => stack.expireApprovals(),
    run: async (input, name = `test-${++runs}`) => {
      const { executionArn } = stack.engine.startExecution({ name, input });
      const description = await stack.engine.waitForExecution(executionArn);
      const history = stack.engine.getExecutionHistory(executionArn);
      return { ...description, history, states: summarizeHistory(history) };
    },
  };
}

// The approval route and the probe wait are the refund harness's: one copy of each.
export { postDecision, waitFor };

/** A clock the test moves forward (approval deadlines, budgets); the engine's own waits stay real. */
export function testClock() {
  let offsetMs = 0;
  return { now: () => new Date(Date.now() + offsetMs), advance: (ms: number) => void (offsetMs += ms) };
}

/** Idempotency keys the mail provider sent more than one mail for (must always be empty). */
export function keysSentTwice(world: TriageWorld): string[] {
  return [...world.server.sentCountBy(KEY_HEADER)].filter(([, count]) => count > 1).map(([key]) => key);
}

/** Tickets that got more than one reply (must always be empty). */
export function ticketsAnsweredTwice(world: TriageWorld): string[] {
  const counts = new Map<string, number>();
  for (const mail of world.server.sent()) counts.set(mail.inReplyTo ?? '?', (counts.get(mail.inReplyTo ?? '?') ?? 0) + 1);
  return [...counts].filter(([, count]) => count > 1).map(([ticket]) => ticket);
}
