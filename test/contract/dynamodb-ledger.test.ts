import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, QueryCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbLedger } from '../../lambdas/ledger/dynamodb-ledger.js';
import { ephemeralSealer } from '../../lambdas/ledger/seal.js';
import { ensureTable, startDynamo, type LocalDynamo } from '../../local/services/dynamodb.js';
import { ledgerTableFromTemplate } from '../../local/template/synthesize.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { describeLedgerContract } from './ledger.contract.js';
import { at, call, holder, run, turn } from './fixtures.js';
import { EFFECT_READS_AT_ONCE } from '../../lambdas/ledger/storage-ledger.js';
import { documentClient } from '../support/document-client.js';

// The DynamoDB ledger on dynalite (in memory) with the real SDK: the conditional writes that deploy.
let dynamo: LocalDynamo;
let table: (name: string) => CreateTableCommandInput;
let tables = 0;
// Damage and stored items are read and written with the SDK's document client (with the ledger's
// marshalling options: lambdas/ledger/dynamodb-ledger.ts MARSHALL_OPTIONS): one for the file, as
// every test's table is on the same endpoint (a client per test cost 0.15 s of CPU in all).
let doc: DynamoDBDocumentClient;

beforeAll(async () => {
  dynamo = await startDynamo();
  doc = documentClient(dynamo, { marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true } });
  // The keys and indexes of the synthesized template, so the table is the one that deploys.
  const template = await cachedTemplate('agent');
  table = (name) => ledgerTableFromTemplate(template, name);
});
afterAll(async () => {
  doc.destroy();
  await dynamo.close();
});

describeLedgerContract('DynamoDB on dynalite', async () => {
  // A fresh table per test: no test sees another's items.
  const name = `ledger-${++tables}`;
  await ensureTable(dynamo.client, table(name));
  const sealer = ephemeralSealer();
  const ledger = new DynamoDbLedger(dynamo.client, name, sealer);
  // Damage: the items themselves, changed with the SDK (what a person with table access could do).
  const damage = async (runId: string, edit: (items: Map<string, Record<string, unknown>>) => void) => {
    const found = await doc.send(new QueryCommand({ TableName: name, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `RUN#${runId}` } }));
    const before = new Map((found.Items ?? []).map((item) => [String(item['sk']), item]));
    const after = new Map([...before].map(([sk, item]) => [sk, structuredClone(item)]));
    edit(after);
    for (const sk of before.keys()) if (!after.has(sk)) await doc.send(new DeleteCommand({ TableName: name, Key: { pk: `RUN#${runId}`, sk } }));
    for (const [sk, item] of after) {
      if (JSON.stringify(item) !== JSON.stringify(before.get(sk))) await doc.send(new PutCommand({ TableName: name, Item: { ...item, pk: `RUN#${runId}`, sk } }));
    }
    // A new instance: nothing it holds from earlier reads stands in for the table.
    return new DynamoDbLedger(dynamo.client, name, sealer);
  };
  const stored = async (pk: string) => (await doc.send(new QueryCommand({ TableName: name, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true }))).Items ?? [];
  // Another Lambda on the same table: its own instance, nothing read yet.
  return { ledger, damage, stored, another: () => new DynamoDbLedger(dynamo.client, name, sealer) };
}, { damageable: true, sharesStore: true });

// DynamoDB rejects a write that meets a transaction in flight on its item — a PutItem with
// TransactionConflictException, a TransactWriteItems cancelled with TransactionConflict — and the
// SDK does not retry either (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling).
// The emulator holds a transaction in flight here until the writer that met it waits.
describe('DynamoDB on dynalite: a write that meets a transaction in flight', () => {
  let slow: LocalDynamo;
  let open: (() => void) | undefined;
  let reached: () => void = () => undefined;
  beforeAll(async () => {
    slow = await startDynamo({ transactions: { latency: () => (open ? Promise.resolve() : new Promise<void>((resolve) => ((open = resolve), reached()))) } });
  });
  afterAll(async () => slow.close());

  /** A table, a run on it, and the run's count of one call written in a transaction held in flight. */
  async function countHeld() {
    const name = `conflict-${++tables}`;
    await ensureTable(slow.client, table(name));
    const sealer = ephemeralSealer();
    // The run's creation, a transaction too (its id checked not pruned), goes through at once.
    open = () => undefined;
    await new DynamoDbLedger(slow.client, name, sealer).createRun(run('r1'));
    open = undefined;
    const inFlight = new Promise<void>((resolve) => (reached = resolve));
    const read = (index: number) => ({ ...call({ effect: 'read', call: index, toolCallId: `toolu_${index}` }), status: 'completed' as const, outcome: 'ok' as const, result: '[]' });
    const recorded = new DynamoDbLedger(slow.client, name, sealer).recordCall(read(1), at(0), { stepKey: 'call:3:1', deltas: { steps: 1, toolCalls: 1 } });
    await inFlight;
    // Another Lambda: the transaction is let go when it waits to try again (its injected sleep).
    const waits: number[] = [];
    const another = new DynamoDbLedger(slow.client, name, sealer, async (ms) => {
      waits.push(ms);
      open?.();
    });
    return { name, sealer, recorded, read, another, waits };
  }

  it('a kill and a step counted on the run item (PutItem) are retried after the conflict: every count and the kill end up in the item', async () => {
    const { recorded, another, waits, name, sealer } = await countHeld();
    const kill = { by: 'alice', at: at(1).toISOString(), reason: 'stop' };
    const [counted, killed] = await Promise.all([another.countStep('r1', 'turn:4', { steps: 1, inputTokens: 5 }), another.killRun('r1', kill), recorded]);
    expect([counted, killed]).toEqual([true, true]);
    expect(waits.length).toBeGreaterThan(0);
    expect(await new DynamoDbLedger(slow.client, name, sealer).getRun('r1')).toMatchObject({ steps: 2, toolCalls: 1, inputTokens: 5, killed: kill });
  });

  it('a sibling call counted in its own transaction (TransactionConflict) is retried after the conflict: both counts end up in the item', async () => {
    const { recorded, another, waits, read, name, sealer } = await countHeld();
    const [first, second] = await Promise.all([recorded, another.recordCall(read(2), at(0), { stepKey: 'call:3:2', deltas: { steps: 1, toolCalls: 1 } })]);
    expect([first.recorded, second.recorded]).toEqual([true, true]);
    expect(waits.length).toBeGreaterThan(0);
    expect(await new DynamoDbLedger(slow.client, name, sealer).getRun('r1')).toMatchObject({ steps: 2, toolCalls: 2 });
  });
});

// A Scan reads at most 1 MB of items a page, in the order of its keys' hashes, not by age
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Scan.html#Scan.Pagination): the
// newest runs are known only once every page is read.
describe('DynamoDB on dynalite: the runs of a table a scan reads in several pages', () => {
  it('lists the newest runs up to the limit, whichever page holds them', async () => {
    const name = `pages-${++tables}`;
    await ensureTable(dynamo.client, table(name));
    const ledger = new DynamoDbLedger(dynamo.client, name, ephemeralSealer());
    // 12 runs, each with a turn of 300 kB: more than three pages of a scan.
    for (let index = 1; index <= 12; index += 1) {
      await ledger.createRun(run(`r${index}`, { createdAt: at(index).toISOString() }));
      await ledger.recordTurn(turn(1, 'x'.repeat(300_000), `r${index}`));
    }
    let pages = 0;
    for (let start: Record<string, unknown> | undefined, first = true; first || start; first = false, pages += 1) {
      start = (await doc.send(new ScanCommand({ TableName: name, Select: 'COUNT', ...(start && { ExclusiveStartKey: start }) }))).LastEvaluatedKey;
    }
    expect(pages).toBeGreaterThan(3);
    const ids = (runs: { runId: string }[]) => runs.map((listed) => listed.runId);
    expect(ids(await ledger.listRuns(3))).toEqual(['r12', 'r11', 'r10']);
    expect(ids(await ledger.listRuns(1))).toEqual(['r12']);
    expect(ids(await ledger.listRuns())).toEqual(['r12', 'r11', 'r10', 'r9', 'r8', 'r7', 'r6', 'r5', 'r4', 'r3', 'r2', 'r1']);
  });

  it("lists them by each agent's index, not a scan, when the table's agents are known, and reads only the runs it lists", async () => {
    const name = `agents-${++tables}`;
    await ensureTable(dynamo.client, table(name));
    const sealer = ephemeralSealer();
    const writer = new DynamoDbLedger(dynamo.client, name, sealer);
    // Two agents' runs, interleaved in time, each with a turn of 300 kB (several pages of a scan).
    for (let index = 1; index <= 8; index += 1) {
      await writer.createRun(run(`r${index}`, { agent: index % 2 === 0 ? 'even' : 'odd', createdAt: at(index).toISOString() }));
      await writer.recordTurn(turn(1, 'x'.repeat(300_000), `r${index}`));
    }
    const sent: string[] = [];
    const counted = { send: (command: { constructor: { name: string } }) => (sent.push(command.constructor.name), dynamo.client.send(command as never)) } as unknown as typeof dynamo.client;
    const reader = new DynamoDbLedger(counted, name, sealer, undefined, ['odd', 'even']);
    const ids = (runs: { runId: string }[]) => runs.map((listed) => listed.runId);
    expect(ids(await reader.listRuns(3))).toEqual(['r8', 'r7', 'r6']);
    expect(sent.filter((command) => command === 'ScanCommand')).toEqual([]);
    expect(sent.filter((command) => command === 'QueryCommand')).toHaveLength(2);
    expect(sent.filter((command) => command === 'GetItemCommand')).toHaveLength(3);
    // The same list as the scan gives (every agent's runs are the table's).
    expect(ids(await reader.listRuns())).toEqual(ids(await writer.listRuns()));
  });
});

describe('DynamoDB on dynalite: the effects `savepoint effects` lists', () => {
  it(`reads the effects a scan found ${EFFECT_READS_AT_ONCE} at a time, not all at once (a burst DynamoDB may throttle), and lists every one`, async () => {
    const name = `effects-${++tables}`;
    await ensureTable(dynamo.client, table(name));
    const sealer = ephemeralSealer();
    const writer = new DynamoDbLedger(dynamo.client, name, sealer);
    const keys = Array.from({ length: 3 * EFFECT_READS_AT_ONCE + 1 }, (_, index) => `refunds:issue_refund:rr_${index}`);
    for (const [index, key] of keys.entries()) {
      const by = holder({ key, call: index + 1 });
      await writer.claimCall(call({ call: by.call, effectKey: key }), at(0), by);
    }
    let inFlight = 0;
    let most = 0;
    const counted = {
      send: async (command: { constructor: { name: string } }) => {
        if (command.constructor.name !== 'GetItemCommand') return dynamo.client.send(command as never);
        most = Math.max(most, ++inFlight);
        try {
          return await dynamo.client.send(command as never);
        } finally {
          inFlight--;
        }
      },
    } as unknown as typeof dynamo.client;
    const listed = await new DynamoDbLedger(counted, name, sealer).listEffects();
    expect(listed.map((effect) => effect.key).sort()).toEqual([...keys].sort());
    expect(most).toBe(EFFECT_READS_AT_ONCE);
  });
});
