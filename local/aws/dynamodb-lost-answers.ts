/**
 * A DynamoDB write that committed and whose answer was lost: DynamoDB may answer a request with
 * HTTP 500 `InternalServerError` (a server error: retry it), whether or not the write was applied
 * ("Error handling with DynamoDB", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html);
 * a connection reset after the commit loses the answer the same way. The SDKs retry both by
 * themselves (the JavaScript SDK's retry strategy takes any 500, 502, 503, 504 and any ECONNRESET, ECONNREFUSED,
 * EPIPE, ETIMEDOUT as transient: @smithy/service-error-classification `isTransientError`), with the
 * same request: a conditional PutItem's retry then meets the write that landed and fails its
 * condition (`ConditionalCheckFailedException`), a TransactWriteItems' retry carries the same
 * `ClientRequestToken` (local/aws/dynamodb-transactions.ts).
 *
 * Off by default. With `LocalStackOptions.dynamoDbLostAnswers`, the twin commits the chosen writes
 * and loses their answers: the `every`-th write of `operations` that committed (its answer 200),
 * counted from `first`, is answered 500 `InternalServerError` (or its connection is cut). It counts
 * what it did: the writes that succeeded, the answers lost, and the retries that came back for
 * them (a request whose body is a lost one's, byte for byte, as the SDK sends it again).
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { replyDynamo } from './dynamodb-reply.js';

export const LOST_ANSWER_OPERATIONS = ['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems'] as const;
export type LostAnswerOperation = (typeof LOST_ANSWER_OPERATIONS)[number];

/** Which committed writes lose their answer, and how (`LocalStackOptions.dynamoDbLostAnswers`). */
export interface DynamoDbLostAnswers {
  /** Every `every`-th committed write of `operations` loses its answer (at least 2: a retry is itself a write, and must be answered). */
  readonly every: number;
  /** The committed write whose answer is lost first (1 is the first one). @default every */
  readonly first?: number;
  /** The writes counted. @default all four */
  readonly operations?: readonly LostAnswerOperation[];
  /** How the answer is lost: a 500 `InternalServerError`, or the connection cut (`ECONNRESET` on the client). @default 'InternalServerError' */
  readonly as?: 'InternalServerError' | 'ECONNRESET';
}

/** What the twin did, so far. */
export interface LostAnswerCounts {
  /** Requests of the counted operations the twin got (retries included). */
  requests: number;
  /** Of them, those that succeeded: answered 200, or their 200 lost (a transaction's retry answered by its token counts too). */
  succeeded: number;
  /** Committed writes whose answer was lost. */
  lost: number;
  /** Requests that came again after their answer was lost: the SDK's retries. */
  retried: number;
  /** Each write whose answer was lost: its operation and the keys (`pk|sk`) it wrote or checked. */
  lostWrites: string[];
}

const OPTION = 'dynamoDbLostAnswers';

/** The option, checked: a bad value names the option and the field. */
export function checkLostAnswers(option: DynamoDbLostAnswers): Required<DynamoDbLostAnswers> {
  const bad = (field: string, want: string, got: unknown) => new RangeError(`${OPTION}.${field} must be ${want}, got ${JSON.stringify(got)}`);
  if (typeof option !== 'object' || option === null) throw new RangeError(`${OPTION} must be an object ({ every, first?, operations?, as? }), got ${JSON.stringify(option)}`);
  const { every, first = every, operations = LOST_ANSWER_OPERATIONS, as = 'InternalServerError' } = option;
  if (!Number.isInteger(every) || every < 2) throw bad('every', 'a whole number of at least 2', every);
  if (!Number.isInteger(first) || first < 1) throw bad('first', 'a whole number of at least 1', first);
  if (!Array.isArray(operations) || operations.length === 0 || operations.some((operation) => !LOST_ANSWER_OPERATIONS.includes(operation))) {
    throw bad('operations', `a non-empty list of ${LOST_ANSWER_OPERATIONS.join(', ')}`, operations);
  }
  if (as !== 'InternalServerError' && as !== 'ECONNRESET') throw bad('as', "'InternalServerError' or 'ECONNRESET'", as);
  return { every, first, operations, as };
}

/** Loses the answers `option` picks, of the requests its `serve` is given; `counts` says what it did. */
export function losingAnswers(option: DynamoDbLostAnswers): { counts: LostAnswerCounts; counted: (target: string) => boolean; serve: (request: IncomingMessage, response: ServerResponse, next: RequestListener) => Promise<void> } {
  const { every, first, operations, as } = checkLostAnswers(option);
  const targets = new Set(operations.map((operation) => `DynamoDB_20120810.${operation}`));
  const counts: LostAnswerCounts = { requests: 0, succeeded: 0, lost: 0, retried: 0, lostWrites: [] };
  const lostBodies = new Set<string>();
  return {
    counts,
    counted: (target) => targets.has(target),
    serve: async (request, response, next) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      const digest = createHash('sha256').update(body).digest('hex');
      counts.requests++;
      if (lostBodies.delete(digest)) counts.retried++;
      // The answer is decided when it is written: a write that committed answers 200.
      const writeHead = response.writeHead.bind(response);
      const end = response.end.bind(response);
      let head: Parameters<ServerResponse['writeHead']> | undefined;
      response.writeHead = ((...args: Parameters<ServerResponse['writeHead']>) => ((head = args), response)) as ServerResponse['writeHead'];
      response.end = ((...args: Parameters<ServerResponse['end']>) => {
        response.writeHead = writeHead;
        response.end = end;
        const status = head ? head[0] : response.statusCode;
        if (status === 200) counts.succeeded++;
        const lose = status === 200 && counts.succeeded >= first && (counts.succeeded - first) % every === 0;
        if (!lose) {
          if (head) writeHead(...head);
          return end(...(args as unknown as [unknown]));
        }
        counts.lost++;
        counts.lostWrites.push(writeOf(String(request.headers['x-amz-target']), body));
        lostBodies.add(digest);
        if (as === 'ECONNRESET') return (response.socket?.destroy(), response);
        for (const name of response.getHeaderNames()) response.removeHeader(name);
        replyDynamo(response, 500, { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'Internal server error' });
        return response;
      }) as ServerResponse['end'];
      // What the next server reads of a request: its headers, method and url, and its body as a stream.
      const replay = Object.assign(Readable.from([body]), { headers: request.headers, method: request.method, url: request.url });
      next(replay as unknown as IncomingMessage, response);
    },
  };
}

type KeyAttributes = { pk?: { S?: string }; sk?: { S?: string } };
/** A write, for `lostWrites`: its operation and the keys of its items. */
function writeOf(target: string, body: Buffer): string {
  const request = JSON.parse(body.toString('utf8')) as { Item?: KeyAttributes; Key?: KeyAttributes; TransactItems?: Record<string, { Item?: KeyAttributes; Key?: KeyAttributes }>[] };
  const keyOf = (item: KeyAttributes | undefined) => `${item?.pk?.S}|${item?.sk?.S}`;
  const items = request.TransactItems ? request.TransactItems.map((action) => Object.values(action)[0]).map((action) => action?.Item ?? action?.Key) : [request.Item ?? request.Key];
  return `${target.slice(target.indexOf('.') + 1)} ${items.map(keyOf).join(' ')}`;
}
