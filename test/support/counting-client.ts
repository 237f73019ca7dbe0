import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LEDGER_CLIENT_CONFIG } from '../../lambdas/ledger/dynamodb-ledger.js';
import { localAwsConfig } from '../../local/services/aws-config.js';
import type { LocalDynamo } from '../../local/services/dynamodb.js';

/**
 * A client of its own on the local DynamoDB, made as the ledger's are (LEDGER_CLIENT_CONFIG), that
 * tells `onRequest` the name of each command it sends. Its own, not `dynamo.client` with a counter
 * added: with `cacheMiddleware` the SDK resolves a command's middleware at its first send on a
 * client, so a counter added after another test had sent that command never ran, and a count then
 * depended on the order the tests ran in. The caller destroys it.
 */
export function countingClient(dynamo: Pick<LocalDynamo, 'endpoint'>, onRequest: (commandName: string) => void): DynamoDBClient {
  const client = new DynamoDBClient({ ...localAwsConfig, ...LEDGER_CLIENT_CONFIG, endpoint: dynamo.endpoint });
  client.middlewareStack.add((next, context) => (args) => (onRequest(context.commandName ?? '(unnamed)'), next(args)), { step: 'initialize', name: 'countRequests' });
  return client;
}
