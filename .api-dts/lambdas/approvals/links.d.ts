import * as z from 'zod';
/**
 * Signed approval links: one per approver, bound to the approval id and the approver, expiring at
 * the approval's deadline, used once. A link is `<claims>.<mac>`: the claims as base64url JSON and
 * an HMAC-SHA256 over them with the link key (Secrets Manager on AWS, a key file locally).
 *
 *   sign ─► https://…/decide/apv_…?link=eyJ…​.Xy…   GET shows the page (never decides)
 *                                                 POST from the page decides, once per link id
 */
export declare const LinkClaims: z.ZodObject<{
    approvalId: z.ZodString;
    runId: z.ZodString;
    approver: z.ZodString;
    expiresAt: z.ZodNumber;
    linkId: z.ZodString;
}, z.core.$strict>;
export type LinkClaims = z.infer<typeof LinkClaims>;
export type LinkVerdict = {
    ok: true;
    claims: LinkClaims;
} | {
    ok: false;
    status: 401 | 403 | 410;
    message: string;
};
export interface LinkSigner {
    sign(claims: Omit<LinkClaims, 'linkId'>): Promise<string>;
    verify(token: string, expected: {
        approvalId: string;
    }, now: Date): Promise<LinkVerdict>;
}
/** An HMAC link signer over a key the caller fetched (from Secrets Manager, or a local key file). */
export declare function hmacLinkSigner(key: () => Promise<Buffer>): LinkSigner;
/**
 * Checks a link in the order that tells an attacker least: its signature first (anything forged
 * or tampered is 401), then what it is for (another approval: 403), then its age (410).
 */
export declare function verifyLink(token: string, expected: {
    approvalId: string;
}, now: Date, mac: (payload: string) => Promise<Buffer>): Promise<LinkVerdict>;
