import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { header, type WireRequest } from './http.js';

/**
 * Checks a request's AWS Signature Version 4 the way AWS does: the credential scope must name the
 * expected region and service and the date of `x-amz-date`, the access key must be known, the body
 * must hash to `x-amz-content-sha256`, and the signature, recomputed over the headers the client
 * signed with the same secret, must match. The recomputation uses the SDK's own signer
 * (`@smithy/signature-v4`) rather than a copy of the algorithm.
 */

export interface SigV4Expectation {
  region: string;
  service: string;
  /** Secret access keys by access key id. */
  secrets: ReadonlyMap<string, string>;
}

export interface SigV4Failure {
  /** The AWS error name (`x-amzn-errortype`). */
  name: 'IncompleteSignatureException' | 'InvalidSignatureException' | 'UnrecognizedClientException';
  message: string;
}

const AUTHORIZATION = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/;

export async function sigV4Problem(request: WireRequest, expected: SigV4Expectation): Promise<SigV4Failure | undefined> {
  const authorization = header(request, 'authorization');
  const amzDate = header(request, 'x-amz-date');
  if (authorization === undefined) return incomplete("Missing Authentication Token: an 'Authorization' header is required");
  if (amzDate === undefined || !/^\d{8}T\d{6}Z$/.test(amzDate)) return incomplete("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.");
  const match = AUTHORIZATION.exec(authorization);
  if (match === null) return incomplete(`Authorization header is not a valid AWS4-HMAC-SHA256 signature: ${authorization.slice(0, 40)}…`);
  const [, accessKeyId = '', date, region, service, signedHeaders = ''] = match;

  if (service !== expected.service) return invalid(`Credential should be scoped to correct service: '${expected.service}'.`);
  if (region !== expected.region) return invalid(`Credential should be scoped to a valid region (expected '${expected.region}', got '${region}').`);
  if (date !== amzDate.slice(0, 8)) return invalid('Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP.');
  const secretAccessKey = expected.secrets.get(accessKeyId);
  if (secretAccessKey === undefined) return { name: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  const payloadHash = createHash('sha256').update(request.raw).digest('hex');
  if (header(request, 'x-amz-content-sha256') !== undefined && header(request, 'x-amz-content-sha256') !== payloadHash) {
    return invalid('The provided x-amz-content-sha256 header does not match what was computed.');
  }

  // Re-sign exactly what the client signed: the listed headers, the path as sent, the same date.
  const headers: Record<string, string> = {};
  for (const name of signedHeaders.split(';')) {
    const value = header(request, name);
    if (value === undefined) return invalid(`Signed header ${name} is missing from the request.`);
    headers[name] = value;
  }
  const authority = header(request, ':authority') ?? header(request, 'host') ?? '';
  const signer = new SignatureV4({ credentials: { accessKeyId, secretAccessKey }, region: expected.region, service: expected.service, sha256: NodeSha256 });
  const signed = await signer.sign(
    { method: request.method, protocol: 'http:', hostname: authority.replace(/:\d+$/, ''), path: request.path, query: {}, headers, body: request.raw },
    { signingDate: parseAmzDate(amzDate) },
  );
  if (signed.headers['authorization'] !== authorization) {
    return invalid('The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.');
  }
  return undefined;
}

function incomplete(message: string): SigV4Failure {
  return { name: 'IncompleteSignatureException', message };
}

function invalid(message: string): SigV4Failure {
  return { name: 'InvalidSignatureException', message };
}

function parseAmzDate(value: string): Date {
  const iso = `${value.slice(0, 4)}-${value.slice(4, 6)}-${value.slice(6, 11)}:${value.slice(11, 13)}:${value.slice(13)}`;
  return new Date(iso);
}

/** The `Checksum` the signer asks for, over `node:crypto` (the SDK ships its own in a package of its own). */
class NodeSha256 {
  readonly #hash: Hash | Hmac;

  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#hash = secret === undefined ? createHash('sha256') : createHmac('sha256', toBuffer(secret));
  }

  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.#hash.update(toBuffer(data));
  }

  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest());
  }

  reset(): void {
    throw new Error('NodeSha256 is single-use');
  }
}

function toBuffer(data: string | ArrayBuffer | ArrayBufferView): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}
