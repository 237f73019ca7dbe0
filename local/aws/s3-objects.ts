/**
 * What S3 decides about an object request, as the twin's S3 (local/services/s3.ts) keeps it: a
 * GetObject (or HEAD) is `s3:GetObject` and a PutObject `s3:PutObject`, each authorized on the
 * object's ARN, `arn:aws:s3:::<bucket>/<key>` (the Service Authorization Reference's object
 * resource: https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazons3.html);
 * a refusal is 403 AccessDenied, a key that is not there 404 NoSuchKey, each an XML error body
 * whose `Code` the SDK names its exception by.
 */

/** The IAM action and resource of an object request, or undefined for a request the twin does not serve. */
export function objectRequest(method: string, bucket: string, key: string): { action: string; resource: string } | undefined {
  const action = method === 'GET' || method === 'HEAD' ? 's3:GetObject' : method === 'PUT' ? 's3:PutObject' : undefined;
  return action && { action, resource: `arn:aws:s3:::${bucket}/${key}` };
}

/** S3's answers the twin gives, by code: its HTTP status and message. */
export const S3_ERRORS = {
  AccessDenied: { status: 403, message: 'Access Denied' },
  NoSuchKey: { status: 404, message: 'The specified key does not exist.' },
  PreconditionFailed: { status: 412, message: 'At least one of the pre-conditions you specified did not hold' },
} as const;

/** An S3 error body (XML): its code, message and, for a key, the key. */
export function s3ErrorBody(code: string, message: string, requestId: string, key?: string): string {
  const escape = (text: string) => text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${escape(message)}</Message>${key === undefined ? '' : `<Key>${escape(key)}</Key>`}<RequestId>${requestId}</RequestId></Error>`;
}
