/**
 * DynamoDB low-level API (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.LowLevelAPI.html):
 * every answer carries `x-amzn-RequestId` and `x-amz-crc32`.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { crc32 } from 'node:zlib';

/**
 * An answer of the twin's own DynamoDB requests (those it serves instead of dynalite, and its
 * refusals), with the headers DynamoDB sends on every answer, as dynalite sends them on its own: an
 * id of the request (the SDK's `$metadata.requestId`, what a support case or a log line quotes) and
 * the CRC32 of the body (`x-amz-crc32`).
 */
export function replyDynamo(response: ServerResponse, status: number, answer: unknown): void {
  const body = JSON.stringify(answer);
  response.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': requestId(), 'x-amz-crc32': String(crc32(body)) }).end(body);
}

/** A request id in DynamoDB's shape: 52 characters of upper-case letters and digits. */
const requestId = () => randomBytes(39).toString('base64').toUpperCase().replace(/[+/]/g, '0');
