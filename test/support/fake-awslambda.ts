import type { Context } from 'aws-lambda';
import { PassThrough, type Writable } from 'node:stream';
import type { LambdaStreaming } from '../../lambdas/adapters/run-events-lambda.js';

/**
 * Lambda's Node.js runtime global `awslambda`, as AWS documents it for API Gateway's streaming
 * proxy integration (https://docs.aws.amazon.com/apigateway/latest/developerguide/response-transfer-mode-lambda.html):
 * `HttpResponseStream.from(stream, metadata)` writes the metadata as JSON, then the delimiter
 * (8 null bytes), and the body follows; `streamifyResponse` marks a handler as streaming.
 */
export const DELIMITER = '\u0000'.repeat(8);

export const fakeAwslambda = {
  streamifyResponse: (handler) => Object.assign(handler, { streaming: true }),
  HttpResponseStream: {
    from(writable: Writable, metadata: Record<string, unknown>) {
      writable.write(JSON.stringify(metadata) + DELIMITER);
      return writable;
    },
  },
} satisfies LambdaStreaming;

/** What API Gateway reads from a streaming invocation: the metadata, then the body as it comes. */
export function invocationOutput(stream: PassThrough = new PassThrough()) {
  let raw = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => (raw += chunk));
  return {
    stream,
    get metadata() {
      const at = raw.indexOf(DELIMITER);
      return at < 0 ? undefined : (JSON.parse(raw.slice(0, at)) as { statusCode: number; headers: Record<string, string> });
    },
    get body() {
      const at = raw.indexOf(DELIMITER);
      return at < 0 ? '' : raw.slice(at + DELIMITER.length);
    },
    ids() {
      return [...this.body.matchAll(/^id: (.+)$/gm)].map((match) => match[1]);
    },
  };
}

export function lambdaContext(remainingMs: number): Context {
  return { getRemainingTimeInMillis: () => remainingMs } as Context;
}
