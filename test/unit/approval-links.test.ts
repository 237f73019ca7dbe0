import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hmacLinkSigner, type LinkClaims } from '../../lambdas/approvals/links.js';

const key = Buffer.alloc(32, 7);
const signer = hmacLinkSigner(async () => key);
const now = new Date('2026-11-29T02:00:00Z');
const expiresAt = now.getTime() / 1000 + 3600;
const claims = { approvalId: 'apv_0123456789abcdef', runId: 'refunds-2026-11-28', approver: 'alice@example.com', expiresAt };

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const decode = (token: string) => JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8')) as LinkClaims;
/** Replaces one claim and keeps the old signature: what someone editing a link gets. */
const tampered = (token: string, change: Partial<LinkClaims>) => `${b64({ ...decode(token), ...change })}.${token.split('.')[1]}`;
const resigned = (token: string, change: Partial<LinkClaims>, withKey = key) => {
  const payload = b64({ ...decode(token), ...change });
  return `${payload}.${createHmac('sha256', withKey).update(payload).digest('base64url')}`;
};

describe('the link signer', () => {
  it('accepts its own link for the approval it names, with the approver and a link id', async () => {
    const token = await signer.sign(claims);
    expect(await signer.verify(token, { approvalId: claims.approvalId }, now)).toEqual({ ok: true, claims: { ...claims, linkId: expect.any(String) } });
  });

  it('gives every link its own id (each decides once)', async () => {
    const [a, b] = [await signer.sign(claims), await signer.sign(claims)];
    expect(decode(a).linkId).not.toBe(decode(b).linkId);
  });

  it.each<[string, (token: string) => string, { approvalId?: string; at?: Date }, number, RegExp]>([
    ['an approver changed', (t) => tampered(t, { approver: 'mallory@example.com' }), {}, 401, /signature does not match/],
    ['the approval changed', (t) => tampered(t, { approvalId: 'apv_ffffffffffffffff' }), { approvalId: 'apv_ffffffffffffffff' }, 401, /signature does not match/],
    ['the run changed', (t) => tampered(t, { runId: 'other-run' }), {}, 401, /signature does not match/],
    ['the expiry pushed out', (t) => tampered(t, { expiresAt: expiresAt + 86_400 }), { at: new Date((expiresAt + 10) * 1000) }, 401, /signature does not match/],
    ['the link id changed (a replay under a new id)', (t) => tampered(t, { linkId: 'fresh-id-123' }), {}, 401, /signature does not match/],
    ['a signature by another key', (t) => resigned(t, { approver: 'mallory@example.com' }, Buffer.alloc(32, 9)), {}, 401, /signature does not match/],
    ['the signature cut short', (t) => t.slice(0, -4), {}, 401, /signature does not match/],
    ['no signature', (t) => t.split('.')[0]!, {}, 401, /malformed/],
    ['three parts', (t) => `${t}.x`, {}, 401, /malformed/],
    ['its signature in standard base64 (one encoding only)', (t) => { const [p, sig] = t.split('.'); return `${p}.${Buffer.from(sig!, 'base64url').toString('base64')}`; }, {}, 401, /expected base64url/],
    ['its signature padded', (t) => `${t}=`, {}, 401, /expected base64url/],
    ['signed claims that are not claims', (t) => { const p = b64({ hello: 1 }); return `${p}.${createHmac('sha256', key).update(p).digest('base64url')}`; }, {}, 401, /unreadable claims/],
    ['a valid link for another approval', (t) => t, { approvalId: 'apv_ffffffffffffffff' }, 403, /decides approval apv_0123456789abcdef, not apv_ffffffffffffffff/],
    ['a link at its expiry', (t) => t, { at: new Date(expiresAt * 1000) }, 410, /expired at 2026-11-29T03:00:00.000Z/],
    ['a link a day late', (t) => t, { at: new Date((expiresAt + 86_400) * 1000) }, 410, /expired/],
  ])('refuses %s', async (_case, change, expected, status, message) => {
    const token = change(await signer.sign(claims));
    const verdict = await signer.verify(token, { approvalId: expected.approvalId ?? claims.approvalId }, expected.at ?? now);
    expect(verdict).toEqual({ ok: false, status, message: expect.stringMatching(message) });
  });
});
