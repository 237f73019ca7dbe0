import { afterEach, describe, expect, it } from 'vitest';
import { supportTriage, type TriageWorld } from '../../agents/support-triage/agent.dev.js';
import { KEY_HEADER } from '../../agents/support-triage/domain.js';
import type { AgentDefinition, ToolDefinition } from '../../lambdas/define.js';
import { takeoverAfter } from '../../lambdas/ledger/protocol.js';
import { ProviderApiError } from '../../sim/index.js';
import { wake } from '../support/agent-harness.js';
import { sampleInbox, startTriage, waitFor, type TriageHarness } from '../support/triage-harness.js';
import { manualClock } from '../support/manual-clock.js';
import type { TestClock } from '../../testing/index.js';

/**
 * A provider that commits late (issue 27, item 2), on the synthesized state machine: the mail
 * provider sends a reply when it receives it but shows it in its search of sent mail (what
 * `reconcile` reads) only 50 s later. Every first send loses its answer. Time is the test's clock:
 * while a released call waits out its settle time, the test moves the clock to its end.
 */

const COMMIT_DELAY_MS = 50_000;
/** One ticket answerable from the knowledge base, without approval: one send_reply. */
const inbox = { ...sampleInbox, tickets: sampleInbox.tickets.filter((ticket) => ticket.id === 'tkt_001') };
const input = { inbox: inbox.inbox };

let harness: TriageHarness | undefined;
afterEach(async () => {
  await harness?.stack.close();
  harness = undefined;
});

/** The triage agent with its send tool's reconcile settings set. */
function withSend(settings: Pick<ToolDefinition, 'settleMs' | 'maxReconciles'>): AgentDefinition<any, any, TriageWorld> {
  return { ...supportTriage, tools: supportTriage.tools.map((tool) => (tool.name === 'send_reply' ? { ...tool, ...settings } : tool)) } as AgentDefinition<any, any, TriageWorld>;
}

/**
 * Runs `runId` with the clock moved, whenever a send_reply call was released and waits out its
 * settle time, to just past it (what the Retry's wait would take on AWS).
 */
async function runSkippingSettles(h: TriageHarness, clock: TestClock, runId: string) {
  let finished = false;
  const skipping = (async () => {
    while (!finished) {
      const skip = await waitFor(async () => {
        if (finished) return true;
        const { calls } = await h.stack.ledger.listConversation(runId);
        const now = clock.now().getTime();
        const settling = calls.find((call) => call.name === 'send_reply' && call.status === 'in_flight' && Date.parse(call.leaseUntil) <= now && Date.parse(takeoverAfter(call)) >= now);
        // Moved only between attempts (the latest event a failure: the Retry's wait), never under a
        // running attempt, whose Task timeout would fire at the jump (on AWS no attempt spans a wait).
        return settling && betweenAttempts(h) && Date.parse(takeoverAfter(settling)) - now + 1;
      });
      if (typeof skip === 'number') clock.advance(skip);
    }
  })();
  try {
    return await h.run({ runId, input });
  } finally {
    finished = true;
    wake(); // the waiting probe sees it (no engine event follows the run's end)
    await skipping;
  }
}

/**
 * Runs `runId` with the clock moved only as the state machine waits, as time passes on AWS while it
 * does: each time the execution enters the settle wait (WaitSettle), the clock moves by the seconds
 * that state waits. Nothing else moves it and nothing resumes the run: it finishes on its own, or not.
 */
async function runOnItsOwn(h: TriageHarness, clock: TestClock, runId: string) {
  const off = h.stack.engine.on((event) => {
    if (event.type !== 'WaitStateEntered' || event.stateEnteredEventDetails?.name !== 'WaitSettle') return;
    const { settle } = JSON.parse(event.stateEnteredEventDetails.input) as { settle: { seconds: number } };
    setImmediate(() => clock.advance(settle.seconds * 1000));
  });
  try {
    return await h.run({ runId, input });
  } finally {
    off();
  }
}

/** The run's execution is in a Retry's wait: its latest event is a failed Task. */
function betweenAttempts(h: TriageHarness): boolean {
  const [execution] = h.stack.engine.listExecutions().executions;
  return execution !== undefined && h.stack.engine.getExecutionHistory(execution.executionArn).at(-1)?.type === 'TaskFailed';
}

/** The stack over the late-committing provider, its sends counted; `drop` says which send loses its answer (by its number). */
async function startLate(settings: Pick<ToolDefinition, 'settleMs' | 'maxReconciles'>, drop: (send: number) => boolean, onRequest?: (route: string) => void) {
  const clock = manualClock();
  const sends: string[] = [];
  const started = await startTriage({
    agent: withSend(settings),
    inbox,
    clock,
    commitDelayMs: COMMIT_DELAY_MS,
    dropSendResponses: () => drop(sends.length),
    onRequest: (route) => {
      if (route === 'POST /v1/mail/send') sends.push(route);
      onRequest?.(route);
    },
  });
  return { harness: started, clock, sends };
}

describe('a write whose outcome is unknown, against a provider that commits late', () => {
  it('is reconciled only after the tool’s settle time: one request, no second send', async () => {
    const late = await startLate({ settleMs: 60_000 }, (send) => send === 1);
    const { clock, sends } = late;
    harness = late.harness;
    const finished = await runSkippingSettles(harness, clock, 'late');

    expect(finished.status).toBe('SUCCEEDED');
    expect(sends).toHaveLength(1);
    expect([...harness.stack.world.server.sentCountBy(KEY_HEADER).values()]).toEqual([1]);
    const reply = (await harness.stack.ledger.listConversation('late')).calls.find((call) => call.name === 'send_reply')!;
    expect(reply).toMatchObject({ status: 'completed', outcome: 'ok', attempts: 2, settleMs: 60_000 });
  });

  it('with settleMs: 60000, finishes on its own: the settle time is waited out by the state machine, not by retries that run out (one send)', async () => {
    const late = await startLate({ settleMs: 60_000 }, (send) => send === 1);
    const { clock, sends } = late;
    harness = late.harness;
    const started = clock.now().getTime();
    const finished = await runOnItsOwn(harness, clock, 'waits');

    expect(finished.status).toBe('SUCCEEDED');
    expect(sends).toHaveLength(1);
    const reply = (await harness.stack.ledger.listConversation('waits')).calls.find((call) => call.name === 'send_reply')!;
    expect(reply).toMatchObject({ status: 'completed', outcome: 'ok', attempts: 2, settleMs: 60_000 });
    // Reconciled 60 s after the send, not sooner (and not a minute of real time: the clock moved).
    expect(clock.now().getTime() - started).toBeGreaterThanOrEqual(60_000);
    expect(finished.states['CallTool']!.errors).toMatchObject({ 'Agent.SettleWait': expect.any(Number) });
  });

  it('with the defaults, a provider without keys that commits 50 s late gets one send: reconcile does not find it, so the call is escalated, never sent again', async () => {
    // Every send loses its answer, as in the report of issue 35: four sends before.
    // The defaults: no settle time declared (the example's own is taken away).
    const late = await startLate({ settleMs: undefined }, () => true);
    const { clock, sends } = late;
    harness = late.harness;
    const finished = await runOnItsOwn(harness, clock, 'defaults');

    expect(finished.status).toBe('SUCCEEDED');
    expect(sends).toHaveLength(1);
    const reply = (await harness.stack.ledger.listConversation('defaults')).calls.find((call) => call.name === 'send_reply')!;
    expect(reply).toMatchObject({ status: 'completed', outcome: 'error', guarantee: 'at-most-once' });
    // Reconciled no sooner than the default settle time (the tool's timeout) after the send.
    expect(Date.parse(reply.recordedAt!) - Date.parse(reply.earlierSend!)).toBeGreaterThanOrEqual(20_000);
    expect(JSON.parse(reply.result!)).toMatchObject({ error: 'outcome_unknown', escalated: true });
    const run = await harness.stack.ledger.getRun('defaults');
    expect(run!.guardEvents).toContainEqual(expect.objectContaining({ guard: 'effect', action: 'stopped' }));
  });

  it('with a settle time shorter than the provider’s commit, reconcile looks too early and the reply goes out twice (the control)', async () => {
    const late = await startLate({ settleMs: 10_000 }, (send) => send === 1);
    const { clock, sends } = late;
    harness = late.harness;
    await runSkippingSettles(harness, clock, 'early');
    expect(sends).toHaveLength(2);
  });

  it('escalates a call still undecided after maxReconciles to a person instead of sending it again', async () => {
    // The provider's search of sent mail is down: reconcile can never decide.
    const late = await startLate({ settleMs: 60_000, maxReconciles: 2 }, () => true, (route) => {
      if (route === 'GET /v1/mail/sent') throw new ProviderApiError(503, 'api_error', 'search unavailable');
    });
    const { clock, sends } = late;
    harness = late.harness;
    const finished = await runSkippingSettles(harness, clock, 'undecided');

    expect(finished.status).toBe('SUCCEEDED');
    expect(sends).toHaveLength(1);
    const reply = (await harness.stack.ledger.listConversation('undecided')).calls.find((call) => call.name === 'send_reply')!;
    // Claimed three times: the send, then two reconciles that failed; the fourth claim escalates.
    expect(reply).toMatchObject({ status: 'completed', outcome: 'error', attempts: 4 });
    expect(JSON.parse(reply.result!)).toMatchObject({ error: 'outcome_unknown', escalated: true });
    const run = await harness.stack.ledger.getRun('undecided');
    expect(run!.guardEvents).toContainEqual(expect.objectContaining({ guard: 'effect', action: 'stopped' }));
  });
});
