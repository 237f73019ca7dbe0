import { describe, expect, it } from 'vitest';
import { configProblems, decisionVerdict, executionLimits, type ApprovalPolicy, type Identity } from '../../lambdas/approvals/policy.js';
import { callerOf, personOf } from '../../lambdas/adapters/approval-http.js';
import type { ApprovalRecord } from '../../lambdas/records/ledger-records.js';
import { approval as approvalRecord } from '../contract/fixtures.js';

// The contract suite's approval record, at this file's run and times.
const approval = (change: Partial<ApprovalRecord> = {}): ApprovalRecord =>
  approvalRecord({ runId: 'run-1', decideBy: '2026-11-29T03:00:00Z', createdAt: '2026-11-29T02:00:00Z', ...change });
const run = { runId: 'run-1', startedBy: 'arn:aws:iam::1:user/starter' };
const alice: Identity = { id: 'alice@example.com', via: 'link' };
const bob: Identity = { id: 'bob@example.com', via: 'link' };
const starter: Identity = { id: 'arn:aws:iam::1:user/starter', via: 'iam' };
const deployed: ApprovalPolicy = { separationOfDuties: true };
const twoAbove500: ApprovalPolicy = { separationOfDuties: true, secondApproverAboveMinor: 50_000 };

/** Before the fixture's deadline (decideBy 03:00): the time of every row that names none. */
const beforeDeadline = new Date('2026-11-29T02:30:00Z');

describe('the approval policy', () => {
  it.each<[string, Omit<Parameters<typeof decisionVerdict>[0], 'now'> & { now?: Date }, ReturnType<typeof decisionVerdict>]>([
    ['a person approves a pending approval', { approval: approval(), run, identity: alice, decision: 'approve', policy: deployed }, { action: 'decide' }],
    ['the starter may not approve their own run', { approval: approval(), run, identity: starter, decision: 'approve', policy: deployed }, { action: 'refuse', status: 403, message: expect.stringMatching(/^separation of duties: arn:aws:iam::1:user\/starter started run run-1/) }],
    ['nor reject it', { approval: approval(), run, identity: starter, decision: 'reject', policy: deployed }, { action: 'refuse', status: 403, message: expect.stringMatching(/separation of duties/) }],
    ['the local interactive run: one person is both', { approval: approval(), run, identity: starter, decision: 'approve', policy: { separationOfDuties: false } }, { action: 'decide' }],
    // Issue 36 finding 4: anyone who may call StartExecution starts a run with no recorded starter, then approves it alone.
    ['a run with no verified starter needs two people', { approval: approval(), run: { runId: 'run-1' }, identity: starter, decision: 'approve', policy: deployed }, { action: 'first' }],
    ['a run with no verified starter: the same person again is refused', { approval: approval({ firstApproval: { by: starter.id, via: 'link', at: 'x' } }), run: { runId: 'run-1' }, identity: starter, decision: 'approve', policy: deployed }, { action: 'refuse', status: 403, message: expect.stringMatching(/^second approver/), firstApprovalByCaller: true }],
    ['a run with no verified starter: a second person decides', { approval: approval({ firstApproval: { by: alice.id, via: 'link', at: 'x' } }), run: { runId: 'run-1' }, identity: bob, decision: 'approve', policy: deployed }, { action: 'decide' }],
    ['a run with no verified starter: one person may reject', { approval: approval(), run: { runId: 'run-1' }, identity: starter, decision: 'reject', policy: deployed }, { action: 'decide' }],
    ['a scheduled run (its input is anyone\'s to write) needs two people', { approval: approval(), run: { runId: 'run-1', startedBy: 'schedule:aws.events' }, identity: alice, decision: 'approve', policy: deployed, people: new Set([alice.id, bob.id]) }, { action: 'first' }],
    ['a starter the deployment names nowhere needs two people', { approval: approval(), run, identity: alice, decision: 'approve', policy: deployed, people: new Set([alice.id, bob.id]) }, { action: 'first' }],
    ['a starter the deployment names is someone: one other person decides', { approval: approval(), run: { runId: 'run-1', startedBy: bob.id }, identity: alice, decision: 'approve', policy: deployed, people: new Set([alice.id, bob.id]) }, { action: 'decide' }],
    ['unknownStarter any-approver gives that up', { approval: approval(), run: { runId: 'run-1' }, identity: alice, decision: 'approve', policy: { ...deployed, unknownStarter: 'any-approver' } }, { action: 'decide' }],
    ['without separation of duties a run with no starter needs one', { approval: approval(), run: { runId: 'run-1' }, identity: alice, decision: 'approve', policy: { separationOfDuties: false } }, { action: 'decide' }],
    ['a decided approval', { approval: approval({ status: 'approved', decidedBy: 'bob@example.com' }), run, identity: alice, decision: 'approve', policy: deployed }, { action: 'refuse', status: 409, message: 'approval apv_0123456789abcdef is already approved (by bob@example.com)' }],
    ['an expired approval', { approval: approval({ status: 'expired', decidedBy: 'timeout' }), run, identity: alice, decision: 'reject', policy: deployed }, { action: 'refuse', status: 409, message: expect.stringMatching(/already expired/) }],
    ['a decision for another run', { approval: approval(), run, identity: alice, decision: 'approve', policy: deployed, runId: 'run-2' }, { action: 'refuse', status: 403, message: 'runId: approval apv_0123456789abcdef belongs to run run-1, not run-2' }],
    ['a used link', { approval: approval({ usedLinks: ['link-1'] }), run, identity: alice, decision: 'approve', policy: deployed, linkId: 'link-1' }, { action: 'refuse', status: 409, message: 'link: already used (each link decides once)' }],
    ['a used link on a decided approval says the link was used', { approval: approval({ status: 'approved', usedLinks: ['link-1'] }), run, identity: alice, decision: 'approve', policy: deployed, linkId: 'link-1' }, { action: 'refuse', status: 409, message: expect.stringMatching(/^link: already used/) }],
    ['above the amount, the first approval waits for a second', { approval: approval(), run, identity: alice, decision: 'approve', policy: twoAbove500 }, { action: 'first' }],
    ['the second approver decides', { approval: approval({ firstApproval: { by: alice.id, via: 'link', at: 'x' } }), run, identity: bob, decision: 'approve', policy: twoAbove500 }, { action: 'decide' }],
    // The refusal says the first approval is the caller's (a first approval asked again after its answer was lost is told by it).
    ['the same person twice is not two approvers', { approval: approval({ firstApproval: { by: alice.id, via: 'link', at: 'x' } }), run, identity: alice, decision: 'approve', policy: twoAbove500 }, { action: 'refuse', status: 403, message: expect.stringMatching(/^second approver: alice@example.com approved already/), firstApprovalByCaller: true }],
    ['one rejection is enough', { approval: approval(), run, identity: alice, decision: 'reject', policy: twoAbove500 }, { action: 'decide' }],
    ['at or below the amount one approver is enough', { approval: approval({ amount: { minor: 50_000, currency: 'usd' } }), run, identity: alice, decision: 'approve', policy: twoAbove500 }, { action: 'decide' }],
    ['an approval without an amount needs one approver', { approval: approval({ amount: undefined }), run, identity: alice, decision: 'approve', policy: twoAbove500 }, { action: 'decide' }],
    // Its expiry not recorded yet (the sweep runs once a minute; no engine runs it while a local run is down).
    ['an approval at its deadline is expired: nobody approves it', { approval: approval(), run, identity: alice, decision: 'approve', policy: deployed, now: new Date('2026-11-29T03:00:00Z') }, { action: 'refuse', status: 410, message: 'approval apv_0123456789abcdef expired at 2026-11-29T03:00:00Z (its deadline passed): nobody decides it now' }],
    ['nor rejects it', { approval: approval(), run, identity: alice, decision: 'reject', policy: deployed, now: new Date('2026-11-29T04:00:00Z') }, { action: 'refuse', status: 410, message: expect.stringMatching(/expired at 2026-11-29T03:00:00Z/) }],
    ['nor records a first of two approvals', { approval: approval(), run, identity: alice, decision: 'approve', policy: twoAbove500, now: new Date('2026-11-29T04:00:00Z') }, { action: 'refuse', status: 410, message: expect.stringMatching(/expired at/) }],
    ['a second approver past the deadline', { approval: approval({ firstApproval: { by: alice.id, via: 'link', at: 'x' } }), run, identity: bob, decision: 'approve', policy: twoAbove500, now: new Date('2026-11-29T04:00:00Z') }, { action: 'refuse', status: 410, message: expect.stringMatching(/expired at/) }],
    ['a decided approval past its deadline says it was decided', { approval: approval({ status: 'approved', decidedBy: 'bob@example.com' }), run, identity: alice, decision: 'approve', policy: deployed, now: new Date('2026-11-29T04:00:00Z') }, { action: 'refuse', status: 409, message: expect.stringMatching(/already approved/) }],
  ])('%s', (_case, input, verdict) => {
    expect(decisionVerdict({ now: beforeDeadline, ...input })).toEqual(verdict);
  });
});

describe('configurations that cannot work are named at start', () => {
  const limits = { executionTimeoutSeconds: 10 * 86_400, approvalWaitSeconds: 8 * 86_400 };
  it.each<[string, { approvalTimeoutSeconds: number; maxWallSeconds: number }, RegExp[]]>([
    ['the defaults', { approvalTimeoutSeconds: 86_400, maxWallSeconds: 4 * 3600 }, []],
    ['an approval timeout longer than the wait state', { approvalTimeoutSeconds: 9 * 86_400, maxWallSeconds: 60 }, [/^approvalTimeoutSeconds: 777600 s is longer than the state machine waits for a decision \(691200 s\)$/]],
    ['a decideBy after the execution times out', { approvalTimeoutSeconds: 7 * 86_400, maxWallSeconds: 4 * 86_400 }, [/^approvalTimeoutSeconds: a decideBy 604800 s .* maxWallSeconds \(345600 s\) falls after the execution's own timeout \(864000 s\)$/]],
  ])('%s', (_case, config, problems) => {
    const found = configProblems(config, limits);
    expect(found).toHaveLength(problems.length);
    problems.forEach((problem, index) => expect(found[index]).toMatch(problem));
  });

  it('reads the limits from the definition', () => {
    const definition = JSON.stringify({
      TimeoutSeconds: 864_000,
      States: { Wait: { Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken', TimeoutSeconds: 691_200 }, Call: { Resource: 'arn:aws:states:::lambda:invoke', TimeoutSeconds: 30 } },
    });
    expect(executionLimits(definition)).toEqual({ executionTimeoutSeconds: 864_000, approvalWaitSeconds: 691_200 });
    // A wait inside a Map's iteration (a tool call's approval) is one of them.
    const inMap = JSON.stringify({ States: { Calls: { Type: 'Map', ItemProcessor: { States: { Wait: { Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken', TimeoutSeconds: 600_000 } } } } } });
    expect(executionLimits(inMap)).toEqual({ approvalWaitSeconds: 600_000 });
  });
});

describe('distinct people are told apart by what their caller cannot choose', () => {
  const caller = (userArn: string) => callerOf({ requestContext: { identity: { userArn } } } as never);

  it.each([
    ['an IAM user is itself', 'arn:aws:iam::123456789012:user/alice', 'arn:aws:iam::123456789012:user/alice'],
    ['an assumed role is the role, whatever session name its caller chose', 'arn:aws:sts::123456789012:assumed-role/Approver/alice', 'arn:aws:iam::123456789012:role/Approver'],
    ['an IAM Identity Center session is its user, across permission sets', 'arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_Approvers_0123456789abcdef/alice@example.com', 'identity-center:123456789012:alice@example.com'],
    ['a federated user is every federated user of the account', 'arn:aws:sts::123456789012:federated-user/bob', 'arn:aws:sts::123456789012:federated-user'],
    ['in another partition too', 'arn:aws-cn:sts::123456789012:assumed-role/Approver/x', 'arn:aws-cn:iam::123456789012:role/Approver'],
  ])('%s', (_case, arn, person) => {
    expect(personOf(arn)).toBe(person);
    expect(caller(arn)).toEqual({ id: person, via: 'iam', principal: arn });
  });

  it('two sessions of one role cannot be the two approvers', () => {
    const first = caller('arn:aws:sts::123456789012:assumed-role/Approver/alice')!;
    const second = caller('arn:aws:sts::123456789012:assumed-role/Approver/definitely-not-alice')!;
    const twoNeeded = approval({ amount: { minor: 500_000, currency: 'usd' }, firstApproval: { by: first.id, via: 'iam', at: '2026-11-29T02:00:00Z' } } as never);
    expect(decisionVerdict({ approval: twoNeeded, run, identity: second, decision: 'approve', policy: { ...deployed, secondApproverAboveMinor: 100_000 }, now: beforeDeadline })).toMatchObject({ action: 'refuse', status: 403 });
  });

  it('the starter cannot approve their own run under another session name', () => {
    const started = { runId: 'run-1', startedBy: personOf('arn:aws:sts::123456789012:assumed-role/Ops/starter') };
    const approver = caller('arn:aws:sts::123456789012:assumed-role/Ops/someone-else')!;
    expect(decisionVerdict({ approval: approval(), run: started, identity: approver, decision: 'approve', policy: deployed, now: beforeDeadline })).toMatchObject({ action: 'refuse', status: 403 });
  });

  it('a local user is itself (the loopback API’s principal)', () => {
    expect(caller('local:alice')).toEqual({ id: 'local:alice', via: 'cli', principal: 'local:alice' });
  });
});
