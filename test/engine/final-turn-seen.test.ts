import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbLedger } from '../../lambdas/ledger/dynamodb-ledger.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import type { Ledger, TurnSeen } from '../../lambdas/ledger/ledger.js';
import { ephemeralSealer } from '../../lambdas/ledger/seal.js';
import { handedContent } from '../../lambdas/ledger/handed-versions.js';
import { ensureTable, startDynamo, type LocalDynamo } from '../../local/services/dynamodb.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { ledgerTableFromTemplate } from '../../local/template/synthesize.js';
import { run, t0, turn } from '../contract/fixtures.js';
import { countingClient } from '../support/counting-client.js';

/**
 * A final answer's write (TurnLedger `recordTurn` with `count.seen`, protocol.ts `recordTurnSeen`):
 * the turn and its count written with the global kill item checked, and `seen` told the run as
 * counted and the kill flag as they stood at the write — what CallModel decides the run's end from
 * instead of reading. On DynamoDB it costs no request more than the write (the kill item's basis is
 * the step's own read), and a kill set by another instance since that read is seen, not missed.
 */
let dynamo: LocalDynamo;
let tables = 0;
const clients: DynamoDBClient[] = [];
beforeAll(async () => {
  dynamo = await startDynamo();
});
afterAll(async () => {
  for (const client of clients) client.destroy();
  await dynamo.close();
});

type Setup = { ledger: Ledger; another: Ledger; requests: () => number };

async function dynalite(): Promise<Setup> {
  const name = `seen-${++tables}`;
  await ensureTable(dynamo.client, ledgerTableFromTemplate(await cachedTemplate('agent'), name));
  let requests = 0;
  const client = countingClient(dynamo, () => (requests += 1));
  clients.push(client);
  const sealer = ephemeralSealer();
  return { ledger: new DynamoDbLedger(client, name, sealer), another: new DynamoDbLedger(client, name, sealer), requests: () => requests };
}

function embedded(): Setup {
  const ledger = EmbeddedLedger.open();
  return { ledger, another: ledger, requests: () => 0 };
}

const count = { stepKey: 'turn:1', deltas: { steps: 1, modelTurns: 1, inputTokens: 100 } };

describe.each([
  ['embedded', embedded],
  ['dynalite', dynalite],
] as const)('a final turn’s write, %s ledger', (kind, setup) => {
  it('tells the run as counted, with no request beyond the write', async () => {
    const { ledger, requests } = await setup();
    await ledger.createRun(run('r1'));
    await ledger.loadStep('r1');
    let seen: TurnSeen | undefined;
    const before = requests();
    await ledger.recordTurn(turn(1), { ...count, seen: (saw) => (seen = saw) });
    if (kind === 'dynalite') expect(requests() - before).toBe(1);
    // With the versions of the run item written and of the kill item checked (absent: null), which its calls are handed (steps/handed-step.ts).
    const counted = await ledger.getRun('r1');
    // The basis with the sealed text its calls would be handed: the run as counted, the turn as recorded.
    expect(seen).toEqual({ run: counted, basis: { run: expect.any(String), kill: null, mac: expect.any(String), content: handedContent(counted!, undefined, turn(1)) } });
    expect(seen!.run).toMatchObject({ steps: 1, modelTurns: 1, inputTokens: 100 });
  });

  it('sees a kill of all runs set since the step read the kill flag (by another instance), and counts the turn once', async () => {
    const { ledger, another } = await setup();
    await ledger.createRun(run('r1'));
    await ledger.loadStep('r1');
    const flag = { by: 'operator', reason: 'stop everything', at: t0.toISOString() };
    await another.setGlobalKill(flag);
    let seen: TurnSeen | undefined;
    await ledger.recordTurn(turn(1), { ...count, seen: (saw) => (seen = saw) });
    expect(seen).toMatchObject({ globalKill: flag, run: { steps: 1, modelTurns: 1 }, basis: { run: expect.any(String), kill: expect.any(String), mac: expect.any(String) } });
    expect(await another.getRun('r1')).toMatchObject({ steps: 1, modelTurns: 1 });
  });

  it('tells nothing when the turn was recorded already (a retry): its caller reads', async () => {
    const { ledger } = await setup();
    await ledger.createRun(run('r1'));
    await ledger.recordTurn(turn(1), count);
    let told = false;
    const stored = await ledger.recordTurn(turn(1, 'Another answer.'), { ...count, seen: () => (told = true) });
    expect(stored).toEqual(turn(1));
    expect(told).toBe(false);
    expect(await ledger.getRun('r1')).toMatchObject({ steps: 1, modelTurns: 1 });
  });
});
