import { type AttributeValue, type DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import { LedgerIndexes } from './dynamodb-item.js';
import { newestRuns } from './storage-ledger.js';

/** A run as the `runsByAgent` index lists it: its id and creation time (it projects the run id: a run item changes at every step). */
export interface IndexedRun {
  readonly runId: string;
  readonly createdAt: string;
}

/**
 * The newest `limit` runs of `agent` (created at `notAfter` or before) in the one order of runs
 * (records/run-order.ts `newestFirst`), from the `runsByAgent` index of the DynamoDB ledger's table.
 *
 * The index orders the runs of one instant as it likes, not by run id: one run past `limit` is
 * read, and when it is of the last one's instant, every run of that instant too, so the newest
 * `limit` are taken in the one order (a page of `GET /v1/runs` cut inside a millisecond skips none).
 */
export async function newestRunsOf(client: Pick<DynamoDBClient, 'send'>, tableName: string, agent: string, limit: number, notAfter?: string): Promise<IndexedRun[]> {
  const listed = await indexedRuns(client, tableName, agent, notAfter === undefined ? {} : { notAfter }, limit + 1);
  const boundary = listed[limit - 1]?.createdAt;
  if (boundary !== undefined && listed[limit]?.createdAt === boundary) {
    const seen = new Set(listed.map(({ runId }) => runId));
    for (const run of await indexedRuns(client, tableName, agent, { at: boundary }, Number.MAX_SAFE_INTEGER)) if (!seen.has(run.runId)) listed.push(run);
  }
  return newestRuns(listed, limit);
}

/** Up to `limit` runs of `agent` from the index, newest first by creation time only: those created at `notAfter` or before, or at `at`. */
async function indexedRuns(client: Pick<DynamoDBClient, 'send'>, tableName: string, agent: string, created: { notAfter?: string; at?: string }, limit: number): Promise<IndexedRun[]> {
  const listed: IndexedRun[] = [];
  const range = created.at !== undefined ? ' AND createdAt = :created' : created.notAfter !== undefined ? ' AND createdAt <= :created' : '';
  const bound = created.at ?? created.notAfter;
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: LedgerIndexes.runsByAgent,
        KeyConditionExpression: `runAgent = :agent${range}`,
        ExpressionAttributeValues: { ':agent': { S: agent }, ...(bound !== undefined && { ':created': { S: bound } }) },
        ScanIndexForward: false,
        Limit: Math.min(limit - listed.length, 1000),
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) listed.push({ runId: String(item['runId']?.S), createdAt: String(item['createdAt']?.S) });
    start = page.LastEvaluatedKey;
  } while (start && listed.length < limit);
  return listed;
}
