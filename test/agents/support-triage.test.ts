import { afterEach, describe, expect, it } from 'vitest';
import { supportTriage } from '../../agents/support-triage/agent.dev.js';
import { KEY_HEADER, type SentMail } from '../../agents/support-triage/domain.js';
import { loadReport } from '../../lambdas/runs/report.js';
import type { AgentDefinition } from '../../lambdas/define.js';
import { keysSentTwice, postDecision, sampleInput, startTriage, ticketsAnsweredTwice, waitFor, type TriageHarness } from '../support/triage-harness.js';
import { manualClock } from '../support/manual-clock.js';

/**
 * The support-triage agent end to end on the synthesized state machine: the second example agent,
 * whose mail provider has no idempotency keys. The sample inbox (13 tickets) holds 8 answerable
 * from the knowledge base (2 of them need approval: an angry customer, an order of $1,499), 3 to
 * escalate (no article, a legal threat), a spam and a duplicate.
 */

let harness: TriageHarness | undefined;
afterEach(async () => {
  await harness?.stack.close();
  harness = undefined;
});

const report = (runId: string, agent: AgentDefinition = supportTriage) => loadReport(harness!.stack.ledger, runId, new Date(), agent).then((found) => found!);

/** Drops the provider's answer to the first reply of each ticket, after the mail went out. */
function dropFirstSendPerTicket() {
  const seen = new Set<string>();
  return (mail: SentMail) => {
    const ticket = mail.inReplyTo ?? '';
    if (seen.has(ticket)) return false;
    seen.add(ticket);
    return true;
  };
}

describe('support triage on the synthesized state machine', () => {
  it('handles every ticket, sends each reply once, approves one reply and escalates the one whose approval expired', async () => {
    const clock = manualClock();
    harness = await startTriage({ clock });
    const { stack } = harness;
    // The angry customer's reply is approved through the approval API; nobody decides the $1,499
    // one: the test clock moves past its deadline and the deadline timer's expiry step escalates it.
    const people = (async () => {
      const angry = await waitFor(() => harness!.approvals[0]);
      expect(angry).toMatchObject({ toolName: 'send_reply', summary: expect.stringMatching(/^send_reply to dan\.moss@example\.com on tkt_004 \(angry customer\)/) });
      expect(angry.details).toMatchObject({ ticket: 'tkt_004', sentiment: 'angry', reply: expect.stringContaining('Account > Subscription > Cancel') });
      expect(await postDecision(stack, angry.approvalId, { decision: 'approve', reason: 'tone checked' })).toMatchObject({ status: 200, body: { status: 'approved', delivered: true } });

      const large = await waitFor(() => harness!.approvals[1]);
      expect(large).toMatchObject({ summary: expect.stringContaining('on tkt_005 (order of $1499.00)'), amount: { minor: 149_900, currency: 'usd' } });
      // The deadline timer runs on the test clock: moving past the deadline expires it, with no call from the test.
      clock.advance(601_000);
      await waitFor(async () => (await stack.ledger.getApproval(large.runId, large.turn, large.call!))?.status === 'expired');
    })();
    const finished = await harness.run({ runId: 'inbox', input: sampleInput, config: { approvalTimeoutSeconds: 600 } });
    await people;

    expect(finished.status).toBe('SUCCEEDED');
    expect(JSON.parse(finished.output!)).toMatchObject({ runId: 'inbox', status: 'succeeded', reason: 'done' });
    const figures = await report('inbox');
    expect(figures.summary).toEqual({ tickets: 13, replied: 7, escalated: 4, notApproved: 1, replyErrors: 0, left: 2 });
    expect(figures.approvals).toMatchObject({ total: 2, approved: 1, expired: 1, pending: 0 });
    expect(figures.inFlight).toBe(0);
    // The harness's own word on the tools: the send reconciles, the escalation has keys.
    // Its reconcile declares no settle time: a lost answer it cannot find is escalated, never re-sent.
    expect(figures.tools['send_reply']).toMatchObject({ guarantee: 'exactly-once', ok: 7, expired: 1 });
    expect(figures.tools['escalate']).toMatchObject({ guarantee: 'exactly-once', ok: 4 });
    expect(figures.tools['get_ticket']).toMatchObject({ guarantee: 'read', ok: 13 });

    // What the providers hold: one mail per answered ticket, each carrying its call's key.
    const sent = stack.world.server.sent();
    expect(sent.map((mail) => mail.inReplyTo).sort()).toEqual(['tkt_001', 'tkt_002', 'tkt_003', 'tkt_004', 'tkt_008', 'tkt_011', 'tkt_012']);
    expect(keysSentTwice(stack.world)).toEqual([]);
    const { calls } = await stack.ledger.listConversation('inbox');
    const sends = calls.filter((call) => call.name === 'send_reply' && call.outcome === 'ok');
    expect(new Set(sent.map((mail) => mail.headers[KEY_HEADER]))).toEqual(new Set(sends.map((call) => call.idempotencyKey)));
    const escalations = stack.world.server.escalations();
    expect(escalations.map((escalation) => [escalation.ticketId, escalation.queue])).toEqual([
      ['tkt_005', 'tier2'],
      ['tkt_009', 'tier2'],
      ['tkt_010', 'legal'],
      ['tkt_013', 'tier2'],
    ]);
    expect(escalations[0]!.reason).toMatch(/^the reply was not sent: send_reply failed: approval_expired/);
    // Spam (tkt_006) and the duplicate of tkt_001 (tkt_007) are neither answered nor escalated.
    expect([...sent.map((mail) => mail.inReplyTo), ...escalations.map((escalation) => escalation.ticketId)]).not.toContain('tkt_006');
    expect(sent.map((mail) => mail.inReplyTo)).not.toContain('tkt_007');
    expect(finished.states['RequestApproval']).toMatchObject({ entered: 2, errors: { 'Approval.Expired': 1 } });
  });

  it('never sends a reply twice: the provider drops the answer after sending, and the retry reconciles instead of resending', async () => {
    const sendRequests: string[] = [];
    harness = await startTriage({
      decide: 'approve',
      dropSendResponses: dropFirstSendPerTicket(),
      onRequest: (route) => void (route === 'POST /v1/mail/send' && sendRequests.push(route)),
      // Eight dropped answers are not an outage: a breaker that never opens, so the count of
      // failures below does not depend on how many of them a fast machine fits in its window.
      breaker: { failures: 1_000, windowMs: 1_000, openMs: 1, probeLeaseMs: 1 },
    });
    const { stack } = harness;
    const finished = await harness.run({ runId: 'dropped', input: sampleInput });
    await Promise.all(harness.decisions);

    expect(finished.status).toBe('SUCCEEDED');
    const figures = await report('dropped');
    expect(figures).toMatchObject({ status: 'succeeded', inFlight: 0, summary: { tickets: 13, replied: 8, escalated: 3 } });
    // Every send lost its answer, yet the provider was asked to send each reply exactly once.
    expect(sendRequests).toHaveLength(8);
    const counts = stack.world.server.sentCountBy(KEY_HEADER);
    expect(counts.size).toBe(8);
    expect([...counts.values()].every((count) => count === 1)).toBe(true);
    expect(ticketsAnsweredTwice(stack.world)).toEqual([]);
    // Each send failed once (Agent.Transient), waited out the tool's settle time from its send
    // (Agent.SettleWait: no claim before it, the state machine's Wait), and was completed by
    // reconcile on its second claim, with the provider's own record of the mail. (Each of the 3
    // escalations asked a person first: Agent.ApprovalNeeded, caught into RequestApproval.)
    expect(finished.states['CallTool']!.errors).toEqual({ 'Agent.Transient': 8, 'Agent.SettleWait': expect.any(Number), 'Agent.ApprovalNeeded': finished.states['RequestApproval']!.entered });
    const { calls } = await stack.ledger.listConversation('dropped');
    for (const call of calls.filter((record) => record.name === 'send_reply')) {
      expect(call).toMatchObject({ status: 'completed', outcome: 'ok', attempts: 2 });
      const mail = stack.world.server.sent().find((sent) => sent.headers[KEY_HEADER] === call.idempotencyKey)!;
      expect(JSON.parse(call.result!)).toEqual({ messageId: mail.id, ticketId: call.args['ticketId'], to: mail.to, subject: mail.subject, sentAt: mail.sentAt });
    }
  });

  it('without reconcile the same dropped answers send every reply once: each is escalated to a person, never sent again, and the report says at-most-once', async () => {
    // The control: what `reconcile` prevents. The same agent, its send tool stripped of reconcile.
    const unreconciled: typeof supportTriage = {
      ...supportTriage,
      tools: supportTriage.tools.map((tool) => (tool.name === 'send_reply' ? { ...tool, reconcile: undefined } : tool)),
    };
    harness = await startTriage({ agent: unreconciled, decide: 'approve', dropSendResponses: dropFirstSendPerTicket() });
    const finished = await harness.run({ runId: 'unreconciled', input: sampleInput });
    await Promise.all(harness.decisions);

    expect(finished.status).toBe('SUCCEEDED');
    expect(harness.stack.world.server.sent()).toHaveLength(8);
    expect(ticketsAnsweredTwice(harness.stack.world)).toEqual([]);
    const figures = await report('unreconciled', unreconciled);
    expect(figures.tools['send_reply']!.guarantee).toBe('at-most-once');
    const replies = (await harness.stack.ledger.listConversation('unreconciled')).calls.filter((call) => call.name === 'send_reply' && call.outcome === 'error');
    expect(replies.map((call) => JSON.parse(call.result!))).toEqual(Array(8).fill(expect.objectContaining({ error: 'outcome_unknown', escalated: true })));
    const run = await harness.stack.ledger.getRun('unreconciled');
    expect(run!.guardEvents!.filter((event) => event.guard === 'effect')).toHaveLength(8);
  });

  it('finishes with injected transient faults in every provider and the model, each reply sent once', async () => {
    harness = await startTriage({ failRate: 0.1, seed: 11, decide: 'approve' });
    const finished = await harness.run({ runId: 'flaky', input: sampleInput });
    await Promise.all(harness.decisions);

    expect(finished.status).toBe('SUCCEEDED');
    const figures = await report('flaky');
    expect(figures).toMatchObject({ status: 'succeeded', inFlight: 0, summary: { tickets: 13, replied: 8, escalated: 3, left: 2 } });
    const { CallTool } = finished.states;
    expect(CallTool!.invocations).toBeGreaterThan(CallTool!.entered);
    // A send that failed waits out the settle time before it is reconciled (Agent.SettleWait).
    expect(Object.keys(CallTool!.errors).every((name) => ['Agent.Transient', 'Agent.CircuitOpen', 'Agent.LeaseHeld', 'Agent.SettleWait', 'Agent.ApprovalNeeded'].includes(name))).toBe(true);
    expect(harness.stack.world.server.sent()).toHaveLength(8);
    expect(keysSentTwice(harness.stack.world)).toEqual([]);
  });

  it('does nothing for a run that already finished: the run id is the idempotency key', async () => {
    harness = await startTriage({ decide: 'approve' });
    const input = { runId: 'twice', input: sampleInput };
    await harness.run(input);
    await Promise.all(harness.decisions);
    const second = await harness.run(input);
    expect(second.status).toBe('SUCCEEDED');
    expect(Object.keys(second.states)).toEqual(['StartRun', 'StartOrResume', 'NothingToDo']);
    expect(harness.stack.world.server.sent()).toHaveLength(8);
  });
});
