import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../client/ledger-client.js';
import { historySource } from '../../console/history.js';
import { startConsole } from '../../console/server.js';
import { runRows } from '../../console/views.js';
import { DynamoDbLedger } from '../../lambdas/ledger/dynamodb-ledger.js';
import type { RunRecord } from '../../lambdas/records/ledger-records.js';
import { ephemeralSealer } from '../../lambdas/ledger/seal.js';
import { ensureTable, startDynamo, type LocalDynamo } from '../../local/services/dynamodb.js';
import { ledgerTableFromTemplate } from '../../local/template/synthesize.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { runRecord } from '../support/records.js';
import { documentClient } from '../support/document-client.js';

/**
 * The console's run list on a DynamoDB ledger (dynalite, the real SDK) where one run's record was
 * altered by hand: the other runs are listed, the damaged one is named with its verification
 * error, never shown as a run that could be trusted (in the API and on the page, in headless Chromium).
 */
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
let dynamo: LocalDynamo;
let tables = 0;
beforeAll(async () => {
  dynamo = await startDynamo();
});
afterAll(async () => dynamo.close());

/** A fresh table holding runs r1 and r2, r1's record then altered with the SDK (its step count raised: its seal no longer matches). */
async function ledgerWithDamagedRun(): Promise<DynamoDbLedger> {
  const name = `ledger-${++tables}`;
  await ensureTable(dynamo.client, ledgerTableFromTemplate(await cachedTemplate('agent'), name));
  const ledger = new DynamoDbLedger(dynamo.client, name, ephemeralSealer());
  await ledger.createRun(run('r1'));
  await ledger.createRun(run('r2'));
  const doc = documentClient(dynamo);
  const { Item } = await doc.send(new GetCommand({ TableName: name, Key: { pk: 'RUN#r1', sk: 'RUN' } }));
  await doc.send(new PutCommand({ TableName: name, Item: { ...Item, steps: 7 } }));
  return ledger;
}

const createdAt = '2026-11-29T02:00:00.000Z';
function run(runId: string): RunRecord {
  return runRecord({ runId, createdAt, updatedAt: createdAt, budgetExtensions: {} });
}

describe('the console run list', () => {
  it('lists the runs it can trust and names a run whose record fails verification', async () => {
    const ledger = await ledgerWithDamagedRun();
    const { runs, damaged } = await runRows(ledger, {}, new Date('2026-11-29T03:00:00Z'));
    expect(runs.map((row) => row.runId)).toEqual(['r2']);
    expect(damaged).toEqual([{ runId: 'r1', error: expect.stringMatching(/^ledger integrity: run r1, record RUN fails verification/) }]);
  });

  it('names the damage when the damaged run is opened, as `savepoint verify` would, not as an internal error', async () => {
    const ledger = await ledgerWithDamagedRun();
    const server = await startConsole({ ledger, client: createClient({ ledger }), history: historySource({}), canStart: false });
    try {
      for (const path of ['/api/runs/r1', '/api/runs/r1/timeline']) {
        const response = await fetch(`${server.origin}${path}`, { headers: { 'x-savepoint-token': server.token } });
        expect({ status: response.status, body: await response.json() }).toEqual({ status: 500, body: { message: expect.stringMatching(/^ledger integrity: run r1, record RUN fails verification/) } });
      }
    } finally {
      await server.close();
    }
  });

  it.skipIf(!existsSync(CHROMIUM))('shows the damaged run as a notice above the runs it lists, on the page', async () => {
    const ledger = await ledgerWithDamagedRun();
    const { chromium } = await import('playwright-core');
    const [server, browser] = await Promise.all([
      startConsole({ ledger, client: createClient({ ledger }), history: historySource({}), canStart: false }),
      chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] }),
    ]);
    try {
      const page = await browser.newPage();
      await page.goto(server.url);
      const notice = page.locator('[data-testid=damaged-runs]');
      await notice.waitFor();
      expect(await notice.locator('li').evaluateAll((items) => items.map((item) => item.getAttribute('data-run')))).toEqual(['r1']);
      expect(await notice.textContent()).toMatch(/1 run left out: its record fails verification\..*r1: ledger integrity: run r1, record RUN fails verification/);
      expect(await page.locator('[data-testid=runs] tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-run')))).toEqual(['r2']);
    } finally {
      await browser.close();
      await server.close();
    }
  });
});
