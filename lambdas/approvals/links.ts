import { createHmac, randomBytes } from 'node:crypto';
import { sameSecret } from '../shared/same-secret.js';
import * as z from 'zod';
import { schemaOnFirstUse } from '../shared/on-first-use.js';

/**
 * Signed approval links: one per approver, bound to the approval id and the approver, expiring at
 * the approval's deadline, used once. A link is `<claims>.<mac>`: the claims as base64url JSON and
 * an HMAC-SHA256 over them with the link key (Secrets Manager on AWS, a key file locally).
 *
 *   sign ─► https://…/decide/apv_…?link=eyJ…​.Xy…   GET shows the page (never decides)
 *                                                 POST from the page decides, once per link id
 */

export const LinkClaims = schemaOnFirstUse(() =>
  z
    .object({
      /** The approval this link decides. */
      approvalId: z.string().min(1),
      /** The run the approval belongs to. */
      runId: z.string().min(1),
      /** Who the link was sent to: the identity a decision through it is recorded under. */
      approver: z.string().min(1).max(200),
      /** Seconds since the epoch after which the link is refused. */
      expiresAt: z.number().int().positive(),
      /** The link's own id: each link decides once. */
      linkId: z.string().min(8),
    })
    .strict(),
);
export type LinkClaims = z.infer<ReturnType<typeof LinkClaims>>;

export type LinkVerdict =
  | { ok: true; claims: LinkClaims }
  | { ok: false; status: 401 | 403 | 410; message: string };

export interface LinkSigner {
  sign(claims: Omit<LinkClaims, 'linkId'>): Promise<string>;
  verify(token: string, expected: { approvalId: string }, now: Date): Promise<LinkVerdict>;
}

/**
 * The link key's versions, as its store keeps them (Secrets Manager's AWSCURRENT and AWSPREVIOUS
 * stages): the current key signs; the one it replaced still verifies links it signed for
 * LINK_KEY_ROTATION_WINDOW_MS after `currentSince` (when the current version was made), so a
 * rotation does not void the links approvers already hold. Without `currentSince` the previous key
 * verifies nothing (safe when a store does not say when it rotated).
 */
export interface LinkKeyVersions {
  readonly current: Buffer;
  readonly currentSince?: Date;
  readonly previous?: Buffer;
}

/** How long after a rotation the previous link key still verifies: the longest an approval waits (`approvalTimeoutSeconds` ≤ 7 days). */
export const LINK_KEY_ROTATION_WINDOW_MS = 7 * 24 * 3600_000;

/** The keys a link is checked against at `now`: the current one, then the previous one inside the window. */
export function linkKeysAt(versions: LinkKeyVersions, now: Date, windowMs = LINK_KEY_ROTATION_WINDOW_MS): Buffer[] {
  const inWindow = versions.previous !== undefined && versions.currentSince !== undefined && now.getTime() - versions.currentSince.getTime() < windowMs;
  return inWindow ? [versions.current, versions.previous!] : [versions.current];
}

/**
 * An HMAC link signer over a key the caller fetched (from Secrets Manager, or a local key file):
 * one key, or its versions (above). `keys(true)` asks the store again when a link matches none of
 * the keys held — a rotation since they were read — and the link is checked once more.
 */
export function hmacLinkSigner(keys: (fresh?: boolean) => Promise<Buffer | LinkKeyVersions>): LinkSigner {
  const versions = async (fresh?: boolean): Promise<LinkKeyVersions> => {
    const got = await keys(fresh);
    return Buffer.isBuffer(got) ? { current: got } : got;
  };
  const macWith = (key: Buffer) => async (payload: string) => createHmac('sha256', key).update(payload).digest();
  return {
    async sign(claims) {
      const payload = Buffer.from(JSON.stringify({ ...claims, linkId: randomBytes(12).toString('base64url') })).toString('base64url');
      return `${payload}.${(await macWith((await versions()).current)(payload)).toString('base64url')}`;
    },
    async verify(token, expected, now) {
      const held = await versions();
      const verdict = await verifyLink(token, expected, now, linkKeysAt(held, now).map(macWith));
      if (verdict.ok || verdict.status !== 401) return verdict;
      const fresh = await versions(true);
      return fresh === held || fresh.current.equals(held.current) ? verdict : verifyLink(token, expected, now, linkKeysAt(fresh, now).map(macWith));
    },
  };
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * Checks a link in the order that tells an attacker least: its signature first (anything forged
 * or tampered is 401), then what it is for (another approval: 403), then its age (410).
 */
export async function verifyLink(
  token: string,
  expected: { approvalId: string },
  now: Date,
  macs: readonly ((payload: string) => Promise<Buffer>)[],
): Promise<LinkVerdict> {
  const [payload, signature, ...rest] = token.split('.');
  if (!payload || !signature || rest.length > 0) return { ok: false, status: 401, message: 'link: malformed (expected <claims>.<signature>)' };
  // One encoding only (base64url, unpadded, as signed): Node's decoder also takes standard base64,
  // which would make several spellings of one link valid.
  if (!BASE64URL.test(payload) || !BASE64URL.test(signature)) return { ok: false, status: 401, message: 'link: malformed (expected base64url, unpadded)' };
  const actual = Buffer.from(signature, 'base64url');
  // Every key is tried (no early exit): the time taken does not tell which one matched.
  let matched = false;
  for (const mac of macs) if (sameSecret(actual, await mac(payload))) matched = true;
  if (!matched) {
    return { ok: false, status: 401, message: 'link: the signature does not match (forged or altered link)' };
  }
  let claims: LinkClaims;
  try {
    claims = LinkClaims().parse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
  } catch {
    return { ok: false, status: 401, message: 'link: unreadable claims' };
  }
  if (claims.approvalId !== expected.approvalId) {
    return { ok: false, status: 403, message: `link: it decides approval ${claims.approvalId}, not ${expected.approvalId}` };
  }
  if (now.getTime() >= claims.expiresAt * 1000) {
    return { ok: false, status: 410, message: `link: expired at ${new Date(claims.expiresAt * 1000).toISOString()}` };
  }
  return { ok: true, claims };
}

export interface ApprovalLinks {
  readonly signer: LinkSigner;
  /** The page's URL without the approval id, e.g. `https://…/v1/decide`. */
  readonly pageUrl: string;
  /** Who is sent a link (e-mail addresses, chat handles): the identities their decisions are recorded under. */
  readonly approvers: readonly string[];
}

/** One signed link per approver, valid until the approval's deadline. */
export async function signedLinks(links: ApprovalLinks | undefined, approval: { approvalId: string; runId: string; decideBy: string }): Promise<{ approver: string; url: string }[]> {
  if (!links) return [];
  const expiresAt = Math.floor(Date.parse(approval.decideBy) / 1000);
  return Promise.all(
    links.approvers.map(async (approver) => {
      const token = await links.signer.sign({ approvalId: approval.approvalId, runId: approval.runId, approver, expiresAt });
      return { approver, url: `${links.pageUrl}/${approval.approvalId}?link=${token}` };
    }),
  );
}
