/**
 * An approval id's rule, without zod: `apv_` and the base64url of 16 random bytes
 * (steps/request-approval.ts), held to what a URL path takes. The approvals API (decision.ts
 * `assertApprovalId`) and the client (which refuses an id it could not send as one path segment,
 * such as `''`, before asking) share it.
 */
export const APPROVAL_ID_PATTERN = /^apv_[A-Za-z0-9_-]{10,40}$/;

/** Why `approvalId` is not one, as the approvals API and the client both say it (400). */
export function approvalIdRefusal(approvalId: string | undefined): string {
  return `approvalId: expected an id like apv_…, got ${JSON.stringify(approvalId ?? '')}`;
}
