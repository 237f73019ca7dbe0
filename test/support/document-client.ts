import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, type TranslateConfig } from '@aws-sdk/lib-dynamodb';
import { localAwsConfig } from '../../local/services/aws-config.js';
import type { LocalDynamo } from '../../local/services/dynamodb.js';

/**
 * A document client on the local DynamoDB, on a client of its own: the ledger's (`dynamo.client`)
 * caches its middleware (LEDGER_CLIENT_CONFIG), which the document client refuses.
 */
export function documentClient(dynamo: Pick<LocalDynamo, 'endpoint'>, translateConfig?: TranslateConfig): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(new DynamoDBClient({ ...localAwsConfig, endpoint: dynamo.endpoint }), translateConfig);
}
