import { DynamoDBClient, type CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { type TransactionOptions } from '../aws/dynamodb-transactions.js';
export interface LocalDynamo {
    readonly endpoint: string;
    readonly client: DynamoDBClient;
    close(): Promise<void>;
}
/**
 * DynamoDB on loopback: dynalite, in memory (tests) or on disk under the state directory (runs
 * survive a restart). Only one process may open a path: the engine owns it. Like the engine's other
 * loopback endpoints it serves only requests that carry its credential (local/services/loopback-credential.ts):
 * `endpoint` includes it. `transactions.latency` holds each transaction in flight a while (tests of
 * what meets one: local/aws/dynamodb-transactions.ts); @default none.
 */
export declare function startDynamo(options?: {
    path?: string;
    port?: number;
    transactions?: TransactionOptions;
}): Promise<LocalDynamo>;
/**
 * Creates the table unless it exists (an on-disk ledger keeps its table across restarts), and
 * waits until it is ACTIVE: like DynamoDB, dynalite answers ResourceNotFound while a table is
 * still being created.
 */
export declare function ensureTable(client: DynamoDBClient, input: CreateTableCommandInput): Promise<void>;
