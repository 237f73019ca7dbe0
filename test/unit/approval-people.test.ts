import { describe, expect, it } from 'vitest';
import { namedPeople, personIn, principalMatches, principalPatternProblem, starterPerson } from '../../lambdas/approvals/people.js';
import { deciderPerson } from '../../lambdas/approvals/decision.js';
import type { ApprovalPolicy } from '../../lambdas/approvals/policy.js';

// Issue 36 finding 4: who decides and who starts are the deployment's people, each counted once.
const sso = (user: string, set = 'Finance_0a1b2c3d4e5f6a7b') => `arn:aws:sts::111122223333:assumed-role/AWSReservedSSO_${set}/${user}`;
const approverPrincipals = {
  'alice@example.com': [sso('alice@example.com')],
  ops: ['arn:aws:iam::111122223333:role/ops/Approver'],
  carol: ['arn:aws:iam::111122223333:user/carol'],
};
const policy: ApprovalPolicy = { separationOfDuties: true, approverPrincipals };
const links = { approvers: ['alice@example.com', 'bob@example.com'] };

describe('a principal pattern', () => {
  it.each([
    ['an IAM user is that user', 'arn:aws:iam::111122223333:user/carol', 'arn:aws:iam::111122223333:user/carol', true],
    ['not another user', 'arn:aws:iam::111122223333:user/carol', 'arn:aws:iam::111122223333:user/carolyn', false],
    ['a role is each of its sessions (the session ARN drops the path)', 'arn:aws:iam::111122223333:role/ops/Approver', 'arn:aws:sts::111122223333:assumed-role/Approver/anything', true],
    ['not another role', 'arn:aws:iam::111122223333:role/Approver', 'arn:aws:sts::111122223333:assumed-role/ApproverX/a', false],
    ['not the same role in another account', 'arn:aws:iam::111122223333:role/Approver', 'arn:aws:sts::999999999999:assumed-role/Approver/a', false],
    ['an Identity Center session is its user', sso('alice@example.com'), sso('alice@example.com'), true],
    ['not another user of the same permission set', sso('alice@example.com'), sso('mallory@example.com'), false],
    ['with wildcards in the session', sso('*@example.com'), sso('alice@example.com'), true],
    ['a session of a role whose caller names it matches nothing', 'arn:aws:sts::111122223333:assumed-role/Shared/alice', 'arn:aws:sts::111122223333:assumed-role/Shared/alice', false],
    ['the local user is itself', 'local:alice', 'local:alice', true],
    ['an ARN pattern is never a local user', 'arn:aws:iam::111122223333:user/carol', 'local:carol', false],
  ])('%s', (_case, pattern, caller, matches) => {
    expect(principalMatches(pattern, caller)).toBe(matches);
  });

  it.each([
    ['arn:aws:sts::111122223333:assumed-role/Shared/alice', /session name tells people apart only on IAM Identity Center's roles/],
    ['arn:aws:iam::111122223333:group/approvers', /expected an IAM user or role ARN/],
    ['alice@example.com', /expected an IAM user or role ARN/],
    ['arn:aws:iam::111122223333:role/*', /expected an IAM user or role ARN/],
  ])('refuses %s, saying why', (pattern, problem) => {
    expect(principalPatternProblem(pattern)).toMatch(problem);
  });
});

describe('who decides', () => {
  it('an approver principal decides as its person: the name of their link too', () => {
    expect(deciderPerson({ id: 'identity-center:111122223333:alice@example.com', via: 'iam', principal: sso('alice@example.com') }, policy, links)).toEqual({ ok: true, person: 'alice@example.com' });
    expect(deciderPerson({ id: 'alice@example.com', via: 'link' }, policy, links)).toEqual({ ok: true, person: 'alice@example.com' });
  });

  it('anyone else the transport verified is refused, named', () => {
    expect(deciderPerson({ id: "arn:aws:iam::111122223333:user/mallory", via: "iam", principal: "arn:aws:iam::111122223333:user/mallory" }, policy, links)).toMatchObject({
      ok: false,
      message: "arn:aws:iam::111122223333:user/mallory is not one of this deployment's approver principals (approvals.approverPrincipals)",
    });
  });

  it('a link whose approver the deployment no longer names is refused', () => {
    expect(deciderPerson({ id: 'eve@example.com', via: 'link' }, policy, links)).toMatchObject({ ok: false, message: /^link: eve@example.com is not one of this deployment's approvers/ });
  });

  it('a principal that is two people is refused, naming both', () => {
    const twice: ApprovalPolicy = { ...policy, approverPrincipals: { ...approverPrincipals, dave: ['arn:aws:iam::111122223333:role/Approver'] } };
    expect(deciderPerson({ id: 'x', via: 'iam', principal: 'arn:aws:sts::111122223333:assumed-role/Approver/s' }, twice, links)).toMatchObject({ ok: false, message: /matches the principals of dave and ops/ });
    // …across the starters' list too.
    const alsoStarter: ApprovalPolicy = { ...policy, starterPrincipals: { eve: ['arn:aws:iam::111122223333:user/carol'] } };
    expect(deciderPerson({ id: 'x', via: 'iam', principal: 'arn:aws:iam::111122223333:user/carol' }, alsoStarter, links)).toMatchObject({ ok: false, message: /matches the principals of carol and eve/ });
  });

  it('a starter principal is not an approver principal', () => {
    const starters: ApprovalPolicy = { ...policy, starterPrincipals: { 'alice@example.com': ['arn:aws:iam::111122223333:user/alice'] } };
    expect(deciderPerson({ id: 'x', via: 'iam', principal: 'arn:aws:iam::111122223333:user/alice' }, starters, links)).toMatchObject({ ok: false });
  });

  it('without a directory (a process that holds the ledger) the caller decides as itself', () => {
    expect(deciderPerson({ id: 'local:me', via: 'cli' }, { separationOfDuties: false }, undefined)).toEqual({ ok: true, person: 'local:me' });
  });
});

describe('who starts', () => {
  const starterPrincipals = { 'bob@example.com': ['arn:aws:iam::111122223333:user/bob'] };
  it('is recorded as the person the deployment names them', () => {
    expect(starterPerson(sso('alice@example.com'), 'identity-center:111122223333:alice@example.com', { approverPrincipals })).toEqual({ ok: true, person: 'alice@example.com' });
    expect(starterPerson('arn:aws:iam::111122223333:user/bob', 'arn:aws:iam::111122223333:user/bob', { approverPrincipals, starterPrincipals })).toEqual({ ok: true, person: 'bob@example.com' });
  });

  it('as itself when the deployment names nobody for it and lists no starters', () => {
    expect(starterPerson('arn:aws:iam::111122223333:user/zed', 'arn:aws:iam::111122223333:user/zed', { approverPrincipals })).toEqual({ ok: true, person: 'arn:aws:iam::111122223333:user/zed' });
  });

  it('is refused when the deployment lists its starters and this is none of them', () => {
    expect(starterPerson('arn:aws:iam::111122223333:user/zed', 'x', { approverPrincipals, starterPrincipals })).toMatchObject({ ok: false, message: /is not one of this deployment's starter principals/ });
  });

  it('every name the deployment gives a person', () => {
    expect([...namedPeople({ approverPrincipals, starterPrincipals, linkApprovers: links.approvers })].sort()).toEqual(['alice@example.com', 'bob@example.com', 'carol', 'ops']);
    expect(personIn('local:me', [{ me: ['local:me'] }], 'people')).toEqual({ ok: true, person: 'me' });
  });
});
