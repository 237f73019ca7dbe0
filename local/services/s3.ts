/**
 * S3 on loopback, as much of it as the twin uses: GetObject (a distributed Map's ItemReader reads a
 * batch's manifest with it: local/aws/sfn-item-reader.ts), HeadObject (the runs function reads the
 * manifest's ETag as its batch starts) and PutObject (to put a manifest there), each object's ETag
 * the MD5 of its bytes as S3 gives a single-part upload's,
 * path-style (`/<bucket>/<key>`), for the real `@aws-sdk/client-s3`. Objects live in memory, or
 * under the state directory (`s3/<bucket>/<key, URI-encoded>`: a file put there is an object).
 * Like the twin's other endpoints it serves only requests that carry its credential, and each call
 * is decided by the twin's IAM as its signer's role (local/aws/iam), on the action and resource
 * S3 authorizes it on and refused as S3 refuses (local/aws/s3-objects.ts).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createHash, randomUUID } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';
import { createLoopbackServer } from '../../lambdas/shared/loopback-server.js';
import type { AccessKey } from '../aws/iam/credentials.js';
import type { AuthorizationRequest } from '../aws/iam/policy.js';
import { localAwsConfig } from './aws-config.js';
import { readBoundedBody } from './http-body.js';
import { headEtag, type ManifestReader } from '../../lambdas/runs/batch.js';
import { objectRequest, s3ErrorBody, S3_ERRORS } from '../aws/s3-objects.js';
import { credentialedUrl, MISSING_CREDENTIAL, newLoopbackCredential, credentialChecker } from './loopback-credential.js';

/** The largest object the twin keeps (a manifest, not a data lake): 64 MiB. */
const MAX_OBJECT_BYTES = 64 * 1024 * 1024;

export interface LocalS3 {
  /** `http://127.0.0.1:<port>/<credential>`: the endpoint, path-style, for an S3Client (`s3Client`). */
  readonly endpoint: string;
  /**
   * A reader of objects' bodies as text (GetObject) and ETags (HeadObject) through an S3 client of this endpoint, signing
   * with `credentials` (a role's: local/aws/iam) or as the administrator; the client is made at
   * the first read.
   */
  objectReader(credentials?: AccessKey): ManifestReader;
  close(): Promise<void>;
}

export interface LocalS3Options {
  /** Where objects are kept. @default memory */
  dir?: string;
  /** Decides a call as the role that signed it (its Authorization header), throwing AccessDeniedException to refuse (local/aws/iam). @default every call allowed */
  authorize?: (authorization: string | undefined, request: AuthorizationRequest) => void;
  port?: number;
}

export async function startS3(options: LocalS3Options = {}): Promise<LocalS3> {
  const credential = newLoopbackCredential();
  const pathAfterCredential = credentialChecker(credential);
  const memory = new Map<string, Buffer>();
  const fileOf = (bucket: string, key: string) => join(options.dir!, bucket, encodeURIComponent(key));
  const read = (bucket: string, key: string): Buffer | undefined => {
    if (!options.dir) return memory.get(`${bucket}/${key}`);
    try {
      return readFileSync(fileOf(bucket, key));
    } catch {
      return undefined;
    }
  };
  const write = (bucket: string, key: string, body: Buffer) => {
    if (!options.dir) return void memory.set(`${bucket}/${key}`, body);
    mkdirSync(join(options.dir, bucket), { recursive: true, mode: 0o700 });
    const file = fileOf(bucket, key);
    writeFileSync(`${file}.tmp`, body, { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  };

  const server = createLoopbackServer((request, response) => {
    serve(request, response).catch((error: unknown) => fail(response, 500, 'InternalError', String(error)));
  });

  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const rest = pathAfterCredential(request.url ?? '/');
    if (rest === undefined) {
      request.resume();
      return fail(response, 403, 'InvalidAccessKeyId', MISSING_CREDENTIAL);
    }
    const url = new URL(rest, 'http://s3.invalid');
    const [, bucket, ...keyParts] = url.pathname.split('/');
    const key = keyParts.map(decodeURIComponent).join('/');
    if (!bucket || !key) {
      request.resume();
      return fail(response, 501, 'NotImplemented', 'The local S3 serves GetObject and PutObject of path-style object URLs only');
    }
    const method = request.method ?? 'GET';
    const asked = objectRequest(method, bucket, key);
    if (!asked || [...url.searchParams.keys()].some((name) => name !== 'x-id')) {
      request.resume();
      return fail(response, 501, 'NotImplemented', `The local S3 does not serve ${method} ${url.pathname}${url.search}`);
    }
    if (options.authorize) {
      try {
        options.authorize(request.headers['authorization'], asked);
      } catch (error) {
        request.resume();
        return fail(response, S3_ERRORS.AccessDenied.status, 'AccessDenied', (error as Error).message);
      }
    }
    if (asked.action === 's3:PutObject') {
      if (request.headers['content-encoding']?.includes('aws-chunked')) {
        request.resume();
        return fail(response, 501, 'NotImplemented', 'The local S3 takes a whole body (no aws-chunked encoding): set requestChecksumCalculation WHEN_REQUIRED');
      }
      const body = await readBoundedBody(request, MAX_OBJECT_BYTES);
      if (body === undefined) return fail(response, 400, 'EntityTooLarge', `The local S3 keeps objects of at most ${MAX_OBJECT_BYTES} bytes`);
      write(bucket, key, body);
      return void response.writeHead(200, { etag: etagOf(body) }).end();
    }
    request.resume();
    const object = read(bucket, key);
    if (!object) return fail(response, S3_ERRORS.NoSuchKey.status, 'NoSuchKey', S3_ERRORS.NoSuchKey.message, key);
    // GetObject's and HeadObject's If-Match: the object only if its ETag is the one named, else 412 PreconditionFailed.
    const ifMatch = request.headers['if-match'];
    if (ifMatch !== undefined && !etagMatches(ifMatch, etagOf(object))) return fail(response, S3_ERRORS.PreconditionFailed.status, 'PreconditionFailed', S3_ERRORS.PreconditionFailed.message);
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': object.length, etag: etagOf(object) });
    response.end(method === 'HEAD' ? undefined : object);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const endpoint = credentialedUrl(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, credential);
  const clients: S3Client[] = [];
  return {
    endpoint,
    objectReader: (credentials) => {
      let made: Promise<S3Client> | undefined;
      const client = async () => {
        const { S3Client } = await s3Sdk();
        const s3Client = new S3Client({ ...localAwsConfig, ...(credentials && { credentials }), endpoint, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
        clients.push(s3Client);
        return s3Client;
      };
      return {
        text: async (bucket, key, etag) => {
          const [s3, { GetObjectCommand }] = await Promise.all([(made ??= client()), s3Sdk()]);
          return (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, ...(etag !== undefined && { IfMatch: etag }) }))).Body!.transformToString('utf8');
        },
        etag: async (bucket, key) => {
          const [s3, { HeadObjectCommand }] = await Promise.all([(made ??= client()), s3Sdk()]);
          return headEtag(() => s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key })));
        },
      };
    },
    close: async () => {
      for (const client of clients) client.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The S3 SDK, loaded at the first read: only a batch's manifest is read through it, and loading it
 * costs each engine process ~40 ms of CPU it would spend for nothing on every other run.
 */
let sdk: Promise<typeof import('@aws-sdk/client-s3')> | undefined;
/** An object's ETag as S3 gives a single-part upload's: the MD5 of its bytes, in hex, quoted. */
const etagOf = (body: Buffer) => `"${createHash('md5').update(body).digest('hex')}"`;

/** Whether an If-Match header (one ETag or several, quoted or not, or `*`) names `etag`. */
const etagMatches = (header: string, etag: string) => header.split(',').some((named) => named.trim() === '*' || named.trim().replace(/^W\//, '').replaceAll('"', '') === etag.replaceAll('"', ''));

const s3Sdk = () => (sdk ??= import('@aws-sdk/client-s3'));

/** An S3 error as S3 answers it (an XML body the SDK reads its code from). */
function fail(response: ServerResponse, status: number, code: string, message: string, key?: string): void {
  if (response.headersSent) return void response.destroy();
  response.writeHead(status, { 'content-type': 'application/xml' }).end(s3ErrorBody(code, message, randomUUID(), key));
}
