import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, ResourceNotFoundException, type CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import type { RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { limitConnections } from '../lambdas/shared/loopback-server.js';
import { localAwsConfig } from './aws-config.js';
import { capturingStore, serveTransaction, TRANSACT_WRITE_ITEMS } from './dynamo-transactions.js';
import { credentialedUrl, MISSING_CREDENTIAL, newLoopbackCredential, pathAfterCredential } from './loopback-credential.js';

export interface LocalDynamo {
  readonly endpoint: string;
  readonly client: DynamoDBClient;
  close(): Promise<void>;
}

/**
 * DynamoDB on loopback: dynalite, in memory (tests) or on disk under the state directory (runs
 * survive a restart). Only one process may open a path: the engine owns it. Like the engine's other
 * loopback endpoints it serves only requests that carry its credential (local/loopback-credential.ts):
 * `endpoint` includes it.
 */
export async function startDynamo(options: { path?: string; port?: number } = {}): Promise<LocalDynamo> {
  // dynalite has no transactions: TransactWriteItems is served on its store (local/dynamo-transactions.ts).
  const { server, store } = capturingStore(() => dynalite({ path: options.path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 }));
  const credential = newLoopbackCredential();
  const [serve] = server.listeners('request') as RequestListener[];
  server.removeAllListeners('request');
  server.on('request', (request, response) => {
    const rest = pathAfterCredential(request.url ?? '/', credential);
    if (rest === undefined) {
      request.resume();
      const body = JSON.stringify({ __type: 'com.amazon.coral.service#UnrecognizedClientException', message: `The security token included in the request is invalid: ${MISSING_CREDENTIAL}` });
      return response.writeHead(400, { 'content-type': 'application/x-amz-json-1.0' }).end(body);
    }
    request.url = rest;
    if (request.headers['x-amz-target'] === TRANSACT_WRITE_ITEMS) {
      return void serveTransaction(store, request, response).catch((error: unknown) => {
        response.writeHead(500, { 'content-type': 'application/x-amz-json-1.0' }).end(JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: String(error) }));
      });
    }
    serve!(request, response);
  });
  limitConnections(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const endpoint = credentialedUrl(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, credential);
  const client = new DynamoDBClient({ ...localAwsConfig, endpoint });
  return {
    endpoint,
    client,
    close: async () => {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
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
