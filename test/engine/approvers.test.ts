import { afterEach, describe, expect, it } from 'vitest';
import type { ApprovalPolicy } from '../../lambdas/approvals/policy.js';
import { sampleDay, startHarness, type Harness } from '../support/refund-harness.js';
import { postDecision, postLinkDecision, waitFor } from '../support/agent-harness.js';
import { apiGatewayEvent } from '../../local/services/approval-api.js';
import { lambdaContext } from '../../local/services/lambda-context.js';

/**
 * Issue 36 finding 4, on the local twin through the approval API's handler (the route API Gateway
 * serves on AWS, each caller as the IAM principal it verified): only the deployment's approvers
 * decide, one person counts once whichever way they decide, and separation of duties holds for
 * every way a run starts. Every refusal is a 403 that records nothing.
 */
const account = '111122223333';
const aliceSso = `arn:aws:sts::${account}:assumed-role/AWSReservedSSO_Finance_0a1b2c3d4e5f6a7b/alice@example.com`;
const bobUser = `arn:aws:iam::${account}:user/bob`;
const starterUser = `arn:aws:iam::${account}:user/starter`;
const mallory = `arn:aws:sts::${account}:assumed-role/Admin/alice@example.com`; // may call the API; names her session after Alice
const alice = 'alice@example.com';
const bob = 'bob@example.com';
const people = { approverPrincipals: { [alice]: [aliceSso], [bob]: [bobUser] }, starterPrincipals: { starter: [starterUser], [alice]: [aliceSso] } };
const request = (runId: string) => ({ runId, input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 3600 } });

let harness: Harness;
afterEach(async () => harness?.stack.close());

async function start(policy: Omit<ApprovalPolicy, 'approverPrincipals' | 'starterPrincipals'>, principal?: string) {
  harness = await startHarness({ approvals: { approvers: [alice, bob], policy: { ...policy, ...people }, ...(principal && { principal }) } });
  return harness;
}
const linkOf = (index: number, approver: string) => harness.requested[index]!.links.find((link) => link.approver === approver)!.url;
const stored = async (index: number) => {
  const approval = harness.approvals[index]!;
  return (await harness.stack.ledger.getApproval(approval.runId, approval.turn, approval.call))!;
};

describe('who may decide', () => {
  it('anyone the API lets through who is not an approver is refused 403, and nothing is recorded', async () => {
    await start({ separationOfDuties: true, secondApproverAboveMinor: 70_000 });
    void harness.startAs(starterUser, request('others')).catch(() => undefined);
    await waitFor(() => harness.requested[0]);
    const { approvalId } = harness.approvals[0]!;
    for (const caller of [mallory, `arn:aws:iam::${account}:user/carol`, starterUser]) {
      expect(await harness.decideAs(caller, approvalId, { decision: 'approve' })).toMatchObject({ status: 403, body: { message: `${caller} is not one of this deployment's approver principals (approvals.approverPrincipals)` } });
    }
    expect(await stored(0)).toMatchObject({ status: 'pending' });
    expect((await stored(0)).firstApproval).toBeUndefined();
    // Nor may they read what waits.
    const read = await harness.stack.approvalApi(apiGatewayEvent({ method: 'GET', route: 'approvals', approvalId, body: null, principal: mallory }), lambdaContext('ApprovalCallback', 20_000));
    expect(read.statusCode).toBe(403);
    // An approver decides, as the person the deployment names.
    expect(await harness.decideAs(bobUser, approvalId, { decision: 'approve' })).toMatchObject({ status: 202, body: { firstApproval: { by: bob, via: 'iam' } } });
  });
});

describe('a link outlives its approver', () => {
  it("shows the approval page only to an approver the deployment still names: a removed one's link is refused 403, as its POST is", async () => {
    const approvers = [alice, bob];
    harness = await startHarness({ approvals: { approvers, policy: { separationOfDuties: true, ...people } } });
    void harness.startAs(starterUser, request('removed')).catch(() => undefined);
    await waitFor(() => harness.requested[0]);
    const bobs = linkOf(0, bob);
    expect((await fetch(bobs)).status).toBe(200);
    approvers.splice(approvers.indexOf(bob), 1); // the deployment no longer names Bob (a redeploy)
    const refused = `link: ${bob} is not one of this deployment's approvers (approvals.approvers)`;
    const page = await fetch(bobs);
    const html = await page.text();
    expect({ status: page.status, shown: html.includes(harness.approvals[0]!.summary) || html.includes('Evidence') }).toEqual({ status: 403, shown: false });
    expect(html).toContain(`403: ${refused.replace("'", '&#39;')}`);
    expect(await postLinkDecision(bobs, { decision: 'approve' })).toMatchObject({ status: 403, body: { message: refused } });
    expect(await stored(0)).toMatchObject({ status: 'pending' });
    expect((await fetch(linkOf(0, alice))).status).toBe(200);
  });
});

describe('one person counts once however they decide', () => {
  it('an approval by link and again by IAM is one approver; another person is the second', async () => {
    await start({ separationOfDuties: true, secondApproverAboveMinor: 70_000 });
    void harness.startAs(starterUser, request('twice')).catch(() => undefined);
    await waitFor(() => harness.requested[0]);
    const { approvalId } = harness.approvals[0]!; // $725.00: two approvers
    expect(await postLinkDecision(linkOf(0, alice), { decision: 'approve' })).toMatchObject({ status: 202, body: { waitingForSecond: true } });
    // Refused, saying the first approval is the caller's (a first approval asked again after its
    // answer was lost tells by it that it landed: client/connect.ts), with the approval as it waits.
    expect(await harness.decideAs(aliceSso, approvalId, { decision: 'approve' })).toMatchObject({
      status: 403,
      body: { message: `second approver: ${alice} approved already; another person must approve`, firstApprovalByCaller: true, approval: { approvalId, status: 'pending', firstApproval: { by: alice, via: 'link' } } },
    });
    expect(await stored(0)).toMatchObject({ status: 'pending', firstApproval: { by: alice, via: 'link' } });
    expect(await harness.decideAs(bobUser, approvalId, { decision: 'approve' })).toMatchObject({ status: 200, body: { status: 'approved', decidedBy: bob, decidedVia: 'iam', firstApproval: { by: alice } } });
  });
});

describe('separation of duties, whichever way a run starts', () => {
  it('the starter may not decide through a link, nor by IAM', async () => {
    await start({ separationOfDuties: true });
    void harness.startAs(aliceSso, request('by-alice')).catch(() => undefined);
    await waitFor(() => harness.requested[0]);
    expect((await harness.stack.ledger.getRun('by-alice'))!.startedBy).toBe(alice);
    const { approvalId } = harness.approvals[0]!;
    expect(await postLinkDecision(linkOf(0, alice), { decision: 'approve' })).toMatchObject({ status: 403, body: { message: expect.stringMatching(/^separation of duties: alice@example.com started run by-alice/) } });
    expect(await harness.decideAs(aliceSso, approvalId, { decision: 'approve' })).toMatchObject({ status: 403, body: { message: expect.stringMatching(/^separation of duties/) } });
    expect(await stored(0)).toMatchObject({ status: 'pending' });
    expect((await stored(0)).usedLinks ?? []).toEqual([]);
    expect(await harness.decideAs(bobUser, approvalId, { decision: 'approve' })).toMatchObject({ status: 200, body: { status: 'approved', decidedBy: bob } });
  });

  it('a run started by a plain StartExecution (no verified starter) needs two people: nobody approves alone what they may have started', async () => {
    await start({ separationOfDuties: true });
    void harness.run(request('plain')).catch(() => undefined);
    await waitFor(() => harness.requested[0]);
    expect((await harness.stack.ledger.getRun('plain'))!.startedBy).toBeUndefined();
    const { approvalId } = harness.approvals[0]!;
    expect(await harness.decideAs(bobUser, approvalId, { decision: 'approve' })).toMatchObject({ status: 202, body: { status: 'pending', waitingForSecond: true } });
    expect(await postLinkDecision(linkOf(0, bob), { decision: 'approve' })).toMatchObject({ status: 403, body: { message: expect.stringMatching(/^second approver: bob@example.com approved already/) } });
    expect(await stored(0)).toMatchObject({ status: 'pending' });
    expect(await postLinkDecision(linkOf(0, alice), { decision: 'approve' })).toMatchObject({ status: 200, body: { status: 'approved', decidedBy: alice, firstApproval: { by: bob } } });
  });

  it('a starter the deployment does not list is refused by the runs API, and starts nothing', async () => {
    await start({ separationOfDuties: true });
    await expect(harness.startAs(mallory, request('not-a-starter'))).rejects.toThrow(/runs API answered 403: .*is not one of this deployment's starter principals/);
    expect(await harness.stack.ledger.getRun('not-a-starter')).toBeUndefined();
  });

  it('a starter the deployment does not list is refused a batch as a run (403), and no batch starts', async () => {
    await start({ separationOfDuties: true });
    const batches = (method: 'POST' | 'GET', principal: string, body: unknown = null, batchId?: string) =>
      harness.stack.runsApi(apiGatewayEvent({ method, route: 'batches', approvalId: batchId, body: body === null ? null : JSON.stringify(body), principal }), lambdaContext('RunsApi', 20_000));
    const refused = await batches('POST', mallory, { batchId: 'not-a-starter', items: [{ date: sampleDay.date }] });
    expect(refused.statusCode, refused.body).toBe(403);
    expect(JSON.parse(refused.body)).toEqual({ message: `caller: ${mallory} is not one of this deployment's starter principals (approvals.starterPrincipals)` });
    // No batch holds its id (a 202 started one whose every item's start was refused, and the batch failed).
    expect((await batches('GET', starterUser, null, 'not-a-starter')).statusCode).toBe(404);
    expect(await harness.stack.ledger.getRun('not-a-starter-0')).toBeUndefined();
  });
});

describe('the approval API\'s resource policy, on the twin', () => {
  it('keeps a caller who is no approver off /approvals before the callback runs, as API Gateway does', async () => {
    // The local API plays Mallory's IAM principal: its template names the approvers, as the deployment's would.
    await start({ separationOfDuties: true }, mallory);
    void harness.startAs(starterUser, request('gateway')).catch(() => undefined);
    await waitFor(() => harness.requested[0]);
    const { approvalId } = harness.approvals[0]!;
    const answer = await postDecision(harness.stack, approvalId, { decision: 'approve' });
    expect(answer).toMatchObject({ status: 403, body: { message: expect.stringMatching(/^User: arn:aws:iam::111122223333:role\/Admin is not authorized to perform: execute-api:Invoke on resource: arn:aws:execute-api:.*\/v1\/POST\/approvals\/apv_[\w-]+ with an explicit deny$/) } });
    expect(await stored(0)).toMatchObject({ status: 'pending' });
    // The page stays open to whoever holds a link.
    expect(await postLinkDecision(linkOf(0, bob), { decision: 'approve' })).toMatchObject({ status: 200, body: { decidedBy: bob } });
  });

  it('lets an approver through to the callback', async () => {
    await start({ separationOfDuties: true }, bobUser);
    void harness.startAs(starterUser, request('gateway-bob')).catch(() => undefined);
    await waitFor(() => harness.requested[0]);
    expect(await postDecision(harness.stack, harness.approvals[0]!.approvalId, { decision: 'approve' })).toMatchObject({ status: 200, body: { decidedBy: bob, decidedVia: 'iam' } });
  });
});
