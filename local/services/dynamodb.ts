import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, ResourceNotFoundException, type CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { limitConnections } from '../../lambdas/shared/loopback-server.js';
import { localAwsConfig } from './aws-config.js';
import { LEDGER_CLIENT_CONFIG } from '../../lambdas/ledger/dynamodb-ledger.js';
import { Readable } from 'node:stream';
import { capturingStore, conflictOfWrite, ITEM_WRITES, serveTransaction, TRANSACT_WRITE_ITEMS, transactionsInFlight, type TransactionOptions } from '../aws/dynamodb-transactions.js';
import { sharingTableDescriptions } from './dynalite-tables.js';
import { enforceKeySizes } from '../aws/dynamodb-key-size.js';
import { BATCH_GET_ITEM, serveBatchGet } from '../aws/dynamodb-batch-get.js';
import { replyDynamo } from '../aws/dynamodb-reply.js';
import { losingAnswers, type DynamoDbLostAnswers, type LostAnswerCounts } from '../aws/dynamodb-lost-answers.js';
import { credentialChecker, credentialedUrl, MISSING_CREDENTIAL, newLoopbackCredential } from './loopback-credential.js';

export interface LocalDynamo {
  readonly endpoint: string;
  /** A client made as the ledger's are (LEDGER_CLIENT_CONFIG), which lib-dynamodb's document client refuses: give it one of its own on `endpoint`. */
  readonly client: DynamoDBClient;
  /** What the twin did with `lostAnswers` (local/aws/dynamodb-lost-answers.ts); absent without it. */
  readonly lostAnswers?: LostAnswerCounts;
  close(): Promise<void>;
}

/**
 * DynamoDB on loopback: dynalite, in memory (tests) or on disk under the state directory (runs
 * survive a restart). Only one process may open a path: the engine owns it. Like the engine's other
 * loopback endpoints it serves only requests that carry its credential (local/services/loopback-credential.ts):
 * `endpoint` includes it. `transactions.latency` holds each transaction in flight a while (tests of
 * what meets one: local/aws/dynamodb-transactions.ts); @default none. `lostAnswers` answers
 * chosen committed writes 500 or cuts them (local/aws/dynamodb-lost-answers.ts); @default none.
 */
export async function startDynamo(options: { path?: string; port?: number; transactions?: TransactionOptions; lostAnswers?: DynamoDbLostAnswers } = {}): Promise<LocalDynamo> {
  const losing = options.lostAnswers && losingAnswers(options.lostAnswers);
  // dynalite measures a key by its UTF-16 length and not an index's at all: DynamoDB's bytes (local/aws/dynamodb-key-size.ts).
  enforceKeySizes();
  // dynalite has no transactions: TransactWriteItems is served on its store (local/aws/dynamodb-transactions.ts).
  const { server, store } = capturingStore(() => dynalite({ path: options.path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 }));
  sharingTableDescriptions(store);
  const credential = newLoopbackCredential();
  const pathAfterCredential = credentialChecker(credential);
  const [serve] = server.listeners('request') as RequestListener[];
  server.removeAllListeners('request');
  server.on('request', (request, response) => {
    const rest = pathAfterCredential(request.url ?? '/');
    if (rest === undefined) {
      request.resume();
      return replyDynamo(response, 400, { __type: 'com.amazon.coral.service#UnrecognizedClientException', message: `The security token included in the request is invalid: ${MISSING_CREDENTIAL}` });
    }
    request.url = rest;
    const target = String(request.headers['x-amz-target']);
    if (losing?.counted(target)) return void losing.serve(request, response, (request, response) => dispatch(target, request, response)).catch(failed(response));
    dispatch(target, request, response);
  });
  const dispatch = (target: string, request: IncomingMessage, response: ServerResponse) => {
    if (target === TRANSACT_WRITE_ITEMS) return void serveTransaction(store, request, response, options.transactions).catch(failed(response));
    // dynalite's partial results are not DynamoDB's (16 MB, 1 MB a partition): served on its store (local/aws/dynamodb-batch-get.ts).
    if (target === BATCH_GET_ITEM) return void serveBatchGet(store, request, response).catch(failed(response));
    // A write of an item a transaction holds is rejected (local/aws/dynamodb-transactions.ts): while one
    // is in flight, a write's body is read, checked and handed on to dynalite; while none is, the
    // write goes to dynalite as it came, unread here. It is checked as it arrives: one that meets a
    // transaction begun while its body streams in is not rejected but ordered with it by dynalite's
    // item lock, as if the two had not overlapped.
    if (ITEM_WRITES.has(target) && transactionsInFlight(store as object)) return void rejectingConflicts(store, request, response, serve!).catch(failed(response));
    serve!(request, response);
  };
  limitConnections(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const endpoint = credentialedUrl(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, credential);
  const client = new DynamoDBClient({ ...localAwsConfig, ...LEDGER_CLIENT_CONFIG, endpoint });
  return {
    endpoint,
    client,
    ...(losing && { lostAnswers: losing.counts }),
    close: async () => {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const failed = (response: ServerResponse) => (error: unknown) => {
  replyDynamo(response, 500, { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: String(error) });
};

/** Serves a PutItem, UpdateItem or DeleteItem: TransactionConflictException when a transaction holds its item, dynalite's answer otherwise. */
async function rejectingConflicts(store: unknown, request: IncomingMessage, response: ServerResponse, serve: RequestListener): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const conflict = await conflictOfWrite(store, body.toString('utf8'));
  if (conflict) return void replyDynamo(response, 400, conflict);
  // What dynalite reads of a request: its headers, method and url, and its body as a stream.
  const replay = Object.assign(Readable.from([body]), { headers: request.headers, method: request.method, url: request.url });
  serve(replay as unknown as IncomingMessage, response);
}

/**
 * Creates the table unless it exists (an on-disk ledger keeps its table across restarts), and
 * waits until it is ACTIVE: like DynamoDB, dynalite answers ResourceNotFound while a table is
 * still being created.
 */
export async function ensureTable(client: DynamoDBClient, input: CreateTableCommandInput): Promise<void> {
  const status = async () => {
    try {
      return (await client.send(new DescribeTableCommand({ TableName: input.TableName }))).Table?.TableStatus;
    } catch (error) {
      if (error instanceof ResourceNotFoundException) return undefined;
      throw error;
    }
  };
  if ((await status()) === undefined) await client.send(new CreateTableCommand(input));
  else await checkIndexes(client, input);
  for (let attempt = 0; (await status()) !== 'ACTIVE'; attempt++) {
    if (attempt >= 200) throw new Error(`table ${input.TableName} did not become ACTIVE`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * A table made by an older savepoint may lack an index this one queries (e.g. `runningRuns`), and
 * dynalite cannot add an index to a table: say so, instead of failing later with "The table does
 * not have the specified index".
 */
async function checkIndexes(client: DynamoDBClient, input: CreateTableCommandInput): Promise<void> {
  const table = (await client.send(new DescribeTableCommand({ TableName: input.TableName }))).Table;
  const present = new Set((table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
  const missing = (input.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName).filter((name) => !present.has(name));
  if (missing.length > 0) {
    throw new Error(
      `the ledger table ${input.TableName} was made by an older savepoint and lacks the index(es) ${missing.join(', ')}, which the emulator cannot add: finish its runs with that version, or use a new --state-dir`,
    );
  }
}
