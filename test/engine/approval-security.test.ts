import { DescribeExecutionCommand, SendTaskSuccessCommand, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { localUser } from '../../local/services/approval-api.js';
import { loadReport } from '../../lambdas/runs/report.js';
import { sampleDay, startHarness, type Harness } from '../support/refund-harness.js';
import { postDecision, postLinkDecision, waitFor } from '../support/agent-harness.js';

/**
 * Who may decide, as a deployed stack's policy has it: separation of duties, a second approver
 * above $700, signed links per approver, decisions signed by the callback's key. Every refusal
 * changes nothing; what a forged record "approves" is not paid.
 */
const alice = 'alice@example.com'; // started the run
const bob = 'bob@example.com';
let harness: Harness;
let finished: ReturnType<Harness['run']>;

const linkOf = (index: number, approver: string) => harness.requested[index]!.links.find((link) => link.approver === approver)!.url;
const tamper = (url: string) => url.replace(/link=(.)/, (_m, c: string) => `link=${c === 'A' ? 'B' : 'A'}`);

describe('deciding is authenticated and the policy holds', () => {
  // A stack and a run per test: each test reaches the approval it needs itself.
  beforeEach(async () => {
    harness = await startHarness({ approvals: { approvers: [alice, bob], policy: { separationOfDuties: true, secondApproverAboveMinor: 70_000 } } });
    // Alice starts it through the runs API: her identity is what the API verified, signed for StartRun.
    finished = harness.startAs(alice, { runId: 'security', input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 3600 } });
  });
  afterEach(async () => harness.stack.close());

  it('refuses, with a clear status and changing nothing, then records one decision by two approvers', async () => {
    const { stack } = harness;
    await waitFor(() => harness.requested[0]);
    const approval = harness.approvals[0]!; // $725.00: above $700, two approvers
    const pending = async () => expect(await stack.ledger.getApproval(approval.runId, approval.turn, approval.call)).toMatchObject({ status: 'pending' });

    const starterRefused = await postLinkDecision(linkOf(0, alice), { decision: 'approve' });
    expect(starterRefused).toMatchObject({ status: 403, body: { message: expect.stringMatching(/^separation of duties: alice@example.com started run security/) } });
    // Only the first approver's own second approval says the first is the caller's.
    expect(starterRefused.body).not.toHaveProperty('firstApprovalByCaller');
    expect(await postLinkDecision(tamper(linkOf(0, bob)), { decision: 'approve' })).toMatchObject({ status: 401, body: { message: expect.stringMatching(/^link: (the signature does not match|unreadable claims|malformed)/) } });
    // Whether an approval exists is told only to whoever proved who they are: a forged link gets the
    // same 401 for an unknown id as for the one that waits, and a real link for another id a 403 naming its own.
    const unknown = 'apv_AAAAAAAAAAAAAAAAAAAAAA';
    const forgedForUnknown = await postLinkDecision(tamper(linkOf(0, bob)).replace(approval.approvalId, unknown), { decision: 'approve' });
    expect(forgedForUnknown).toEqual(await postLinkDecision(tamper(linkOf(0, bob)), { decision: 'approve' }));
    expect(forgedForUnknown).toMatchObject({ status: 401 });
    expect(await postLinkDecision(linkOf(0, bob).replace(approval.approvalId, unknown), { decision: 'approve' })).toMatchObject({ status: 403, body: { message: `link: it decides approval ${approval.approvalId}, not ${unknown}` } });
    expect(await postDecision(stack, approval.approvalId, { decision: 'approve', runId: 'another-run' })).toMatchObject({ status: 403, body: { message: expect.stringMatching(/^runId: approval .* belongs to run security, not another-run/) } });
    expect(await postDecision(stack, approval.approvalId, { decision: 'approve', decidedBy: 'ceo' })).toMatchObject({ status: 400, body: { message: expect.stringMatching(/decidedBy/) } });
    await pending();

    expect(await postLinkDecision(linkOf(0, bob), { decision: 'approve', reason: 'checked' })).toMatchObject({ status: 202, body: { status: 'pending', waitingForSecond: true } });
    const linkUsed = await postLinkDecision(linkOf(0, bob), { decision: 'approve' });
    expect(linkUsed).toMatchObject({ status: 409, body: { message: 'link: already used (each link decides once)' } });
    expect(linkUsed.body).not.toHaveProperty('firstApprovalByCaller');
    await pending();
    const decided = await postDecision(stack, approval.approvalId, { decision: 'approve', reason: 'second look' });
    expect(decided).toMatchObject({ status: 200, body: { status: 'approved', decidedBy: localUser(), decidedVia: 'cli', firstApproval: { by: bob, via: 'link', mac: expect.any(String) } } });
    // Asked again, the 409 says whether the recorded decider is the caller (a client whose answer was
    // lost tells its own decision by it: client/connect.ts), and delivers the decision again.
    expect(await postDecision(stack, approval.approvalId, { decision: 'reject' })).toMatchObject({ status: 409, body: { message: expect.stringMatching(/is already approved/), decidedByCaller: true, delivered: expect.any(Boolean) } });
    expect(await postLinkDecision(linkOf(0, alice), { decision: 'approve' })).toMatchObject({ status: 409, body: { message: expect.stringMatching(/is already approved \(by local:/), decidedByCaller: false } });
  });

  it('does not count a first approval written past the callback: one person does not make two', async () => {
    const { stack } = harness;
    await waitFor(() => harness.requested[0]);
    const approval = harness.approvals[0]!; // $725.00: above $700, two approvers
    // Anything that can write the ledger (it holds the seal key, not the decision key) records bob's "first approval".
    const stored = (await stack.ledger.getApproval(approval.runId, approval.turn, approval.call))!;
    const forged = { by: bob, via: 'link' as const, at: new Date().toISOString() };
    expect(await stack.ledger.recordFirstApproval(stored, forged)).toMatchObject({ recorded: true });

    // One real approver then approves: refused, naming the unsigned first approval; nothing is recorded.
    expect(await postDecision(stack, approval.approvalId, { decision: 'approve' })).toMatchObject({
      status: 409,
      body: { message: expect.stringMatching(new RegExp(`^approval ${approval.approvalId}: its first approval \\(by ${bob}\\) is not signed by the decision key`)) },
    });
    const after = await stack.ledger.getApproval(approval.runId, approval.turn, approval.call);
    expect(after).toMatchObject({ status: 'pending', firstApproval: forged });
    expect([after!.decidedBy, after!.decisionMac, after!.usedLinks]).toEqual([undefined, undefined, undefined]);
    // The run still waits: the call is not paid.
    expect(await stack.ledger.getRun(approval.runId)).toMatchObject({ status: 'running' });
    expect((await stack.ledger.getCall(approval.runId, approval.turn, approval.call))?.outcome).toBeUndefined();
    expect(stack.world.payments.refunds().filter((refund) => refund.refundRequestId === approval.details!['refundRequest'])).toHaveLength(0);
  });

  it('does not pay what a record written past the callback "approves"', async () => {
    const { stack } = harness;
    // The first approval ($725.00) decided as the policy wants it: a second approver after bob.
    await waitFor(() => harness.requested[0]);
    expect(await postLinkDecision(linkOf(0, bob), { decision: 'approve' })).toMatchObject({ status: 202 });
    expect(await postDecision(stack, harness.approvals[0]!.approvalId, { decision: 'approve' })).toMatchObject({ status: 200 });
    const approval = await waitFor(() => harness.approvals[1]);
    // Someone with write access to the table and SendTaskSuccess, but not the decision key.
    const stored = (await stack.ledger.getApproval(approval.runId, approval.turn, approval.call))!;
    await stack.ledger.decideApproval(stored, { status: 'approved', decidedBy: 'mallory', decidedVia: 'iam' }, new Date());
    await stack.sfn.send(new SendTaskSuccessCommand({ taskToken: (await stack.ledger.getTaskToken(stored))!, output: JSON.stringify({ approvalId: stored.approvalId, status: 'approved' }) }));
    expect(JSON.parse((await finished).output!)).toMatchObject({ status: 'succeeded' });

    const refunded = (id: unknown) => stack.world.payments.refunds().filter((refund) => refund.refundRequestId === id);
    expect(refunded(harness.approvals[0]!.details!['refundRequest'])).toHaveLength(1);
    expect(refunded(approval.details!['refundRequest'])).toHaveLength(0);
    const call = await stack.ledger.getCall(approval.runId, approval.turn, approval.call);
    expect(call).toMatchObject({ outcome: 'rejected', result: expect.stringContaining('approval_unverified') });
    // The report counts what the harness applied: the forged "approval" is not an approved one.
    const report = await loadReport(stack.ledger, approval.runId, new Date(), stack.agent);
    expect(report!.approvals).toMatchObject({ approved: report!.approvals.total - 1, unverified: 1 });
  });
});

describe('a budget extension', () => {
  it('is not applied when its "approval" was written past the callback: the run stops, saying so', async () => {
    const own = await startHarness({ approvals: { approvers: [bob], policy: { separationOfDuties: true } } });
    try {
      const { stack } = own;
      const running = own.run({ runId: 'forged-extension', input: { date: sampleDay.date }, config: { maxSteps: 12, onBudgetExceeded: 'ask', approvalTimeoutSeconds: 3600 } });
      const extension = await waitFor(() => own.approvals.find((approval) => approval.budget));
      const stored = (await stack.ledger.getBudgetApproval('forged-extension', extension.budget!.guard, extension.budget!.extension))!;
      await stack.ledger.decideApproval(stored, { status: 'approved', decidedBy: 'mallory', decidedVia: 'iam' }, new Date());
      await stack.sfn.send(new SendTaskSuccessCommand({ taskToken: (await stack.ledger.getTaskToken(stored))!, output: JSON.stringify({ approvalId: stored.approvalId, status: 'approved' }) }));
      expect(JSON.parse((await running).output!)).toMatchObject({ status: 'stopped', reason: expect.stringMatching(/budget exceeded: steps 12 \/ 12 \(extension refused: the decision is not signed by the approval callback\)/) });
      expect((await stack.ledger.getRun('forged-extension'))!.config.maxSteps).toBe(12);
    } finally {
      await own.stack.close();
    }
  });
});

// Issue 20 item 5 and issue 26: whoever may call StartExecution writes the whole input, so the
// run's starter is what the runs API verified and signed (lambdas/runs/starter.ts), never a field.
describe('who started a run', () => {
  let own: Harness;
  beforeEach(async () => {
    own = await startHarness({ approvals: { approvers: [alice, bob], policy: { separationOfDuties: true } } });
  });
  afterEach(async () => own.stack.close());
  const request = (runId: string) => ({ runId, input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 3600 } });
  const startedBy = async (runId: string) => (await waitFor(() => own.stack.ledger.getRun(runId))).startedBy;
  const startExecution = (name: string, input: unknown) => own.stack.sfn.send(new StartExecutionCommand({ stateMachineArn: own.stack.stateMachineArn, name, input: JSON.stringify(input) }));

  it('is the caller the runs API verified; a startedBy the input claims is not recorded, nor a signed one moved to another run', async () => {
    void own.startAs(alice, request('by-alice')).catch(() => undefined);
    expect(await startedBy('by-alice')).toBe(alice);

    await startExecution('forged', { ...request('forged'), startedBy: alice, startedByMac: 'QUFBQQ==' });
    expect(await startedBy('forged')).toBeUndefined();
    await startExecution('unsigned', { ...request('unsigned'), startedBy: bob });
    expect(await startedBy('unsigned')).toBeUndefined();

    // Alice's signed input, as anyone who can read her execution sees it, on another run id.
    const [signedArn] = (await own.stack.ledger.getRun('by-alice'))!.executions;
    const signed = JSON.parse((await own.stack.sfn.send(new DescribeExecutionCommand({ executionArn: signedArn! }))).input!) as Record<string, unknown>;
    expect(signed).toMatchObject({ startedBy: alice, startedByMac: expect.any(String) });
    await startExecution('moved', { ...signed, runId: 'moved' });
    expect(await startedBy('moved')).toBeUndefined();
  });

  it('refuses a request that names its own starter, naming the field', async () => {
    await expect(own.startAs(bob, { ...request('claims'), startedBy: alice })).rejects.toThrow(/runs API answered 400: .*startedBy/);
    expect(await own.stack.ledger.getRun('claims')).toBeUndefined();
  });

  it('is served on loopback as this machine\'s user, behind the engine\'s credential', async () => {
    const post = (url: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request('over-http')) });
    expect((await post(own.stack.endpoints.runs.replace(/\/[^/]+\/v1\/runs$/, '/v1/runs'))).status).toBe(403);
    const answer = await post(own.stack.endpoints.runs);
    expect(answer.status).toBe(202);
    expect(await answer.json()).toMatchObject({ runId: 'over-http', startedBy: localUser() });
    expect(await startedBy('over-http')).toBe(localUser());
  });
});
