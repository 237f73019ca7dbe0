import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRows } from '../../console/views.js';
import { DynamoDbLedger } from '../../lambdas/ledger/dynamodb-ledger.js';
import { RunConfig, ZERO_COUNTERS, type RunRecord } from '../../lambdas/ledger/records.js';
import { ephemeralSealer } from '../../lambdas/ledger/seal.js';
import { ensureTable, startDynamo, type LocalDynamo } from '../../local/dynamo.js';
import { ledgerTableFromTemplate } from '../../local/template.js';
import { cachedTemplate } from '../../local/template-cache.js';

/**
 * The console's run list on a DynamoDB ledger (dynalite, the real SDK) where one run's record was
 * altered by hand: the other runs are listed, the damaged one is named with its verification
 * error, never shown as a run that could be trusted.
 */
let dynamo: LocalDynamo;
beforeAll(async () => {
  dynamo = await startDynamo();
});
afterAll(async () => dynamo.close());

const createdAt = '2026-11-29T02:00:00.000Z';
function run(runId: string): RunRecord {
  const config = RunConfig.parse({});
  return { kind: 'run', runId, agent: 'agent', input: {}, prompt: 'p', model: 'm', config, fingerprint: 'f', priceTableVersion: 'v', status: 'running', executionArn: `arn:${runId}`, executions: [`arn:${runId}`], createdAt, updatedAt: createdAt, budgetExtensions: {}, ...ZERO_COUNTERS };
}

describe('the console run list', () => {
  it('lists the runs it can trust and names a run whose record fails verification', async () => {
    await ensureTable(dynamo.client, ledgerTableFromTemplate(await cachedTemplate('agent'), 'ledger'));
    const ledger = new DynamoDbLedger(dynamo.client, 'ledger', ephemeralSealer());
    await ledger.createRun(run('r1'));
    await ledger.createRun(run('r2'));
    const now = new Date('2026-11-29T03:00:00Z');
    expect((await runRows(ledger, {}, now)).damaged).toEqual([]);

    // Someone with table access raises r1's step count: its seal no longer matches.
    const doc = DynamoDBDocumentClient.from(dynamo.client);
    const { Item } = await doc.send(new GetCommand({ TableName: 'ledger', Key: { pk: 'RUN#r1', sk: 'RUN' } }));
    await doc.send(new PutCommand({ TableName: 'ledger', Item: { ...Item, steps: 7 } }));

    const { runs, damaged } = await runRows(ledger, {}, now);
    expect(runs.map((row) => row.runId)).toEqual(['r2']);
    expect(damaged).toEqual([{ runId: 'r1', error: expect.stringMatching(/^ledger integrity: run r1, record RUN fails verification/) }]);
  });
});
