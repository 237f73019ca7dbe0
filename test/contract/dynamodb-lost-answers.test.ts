import { afterEach, describe, expect, it } from 'vitest';
import { DynamoDbLedger } from '../../lambdas/ledger/dynamodb-ledger.js';
import { ephemeralSealer, hmacSealer } from '../../lambdas/ledger/seal.js';
import { ensureTable, startDynamo, type LocalDynamo } from '../../local/services/dynamodb.js';
import { ledgerTableFromTemplate } from '../../local/template/synthesize.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { at, call, run, turn } from './fixtures.js';
import { sixRuns } from './spec/prune.js';

// The DynamoDB ledger's single-item updates (a conditional PutItem each) when DynamoDB loses the
// answer of one after it committed (a 500 InternalServerError: local/aws/dynamodb-lost-answers.ts)
// and the SDK's retry fails its condition on that very write: each comes out as if answered.
// (Transactions are answered again by their ClientRequestToken: test/local/dynamo-lost-answers.test.ts.
// The embedded ledger writes in process: it has no answer to lose.)
let dynamo: LocalDynamo | undefined;
afterEach(async () => {
  await dynamo?.close();
  dynamo = undefined;
});

/** The PutItems of `scenario`, in order, and the item each writes (its run is created by a transaction, not counted). */
const PUTS = [
  ['recordTurn', 'TURN#0003'],
  ['claimCall', 'TURN#0003#CALL#01'],
  ['completeCall', 'TURN#0003#CALL#01'],
  ['countStep', 'RUN'],
  ['finishRun', 'RUN'],
] as const;

async function scenario(lostPut?: number) {
  // Only the `lostPut`-th PutItem that succeeds loses its answer.
  dynamo = await startDynamo({ lostAnswers: { every: 1_000, first: lostPut ?? 1_000, operations: ['PutItem'] } });
  await ensureTable(dynamo.client, ledgerTableFromTemplate(await cachedTemplate('agent'), 'ledger'));
  const ledger = new DynamoDbLedger(dynamo.client, 'ledger', ephemeralSealer());
  await ledger.createRun(run('r1'));
  const answers = {
    recordTurn: (await ledger.recordTurn(turn(3))).turn,
    claimCall: await ledger.claimCall(call({ effect: 'read', leaseUntil: at(30).toISOString() }), at(3)),
    completeCall: await ledger.completeCall({ runId: 'r1', turn: 3, call: 1, outcome: { outcome: 'ok', result: '{"paid":true}', latencyMs: 2 }, now: at(4) }),
    countStep: await ledger.countStep('r1', 'turn:3', { steps: 1, inputTokens: 100 }),
    finishRun: (await ledger.finishRun('r1', { status: 'succeeded', stopReason: 'done' }, at(5))).status,
  };
  const { calls, turns } = await ledger.listConversation('r1');
  const { status, steps, inputTokens, modelTurns, toolCalls } = (await ledger.getRun('r1'))!;
  return { answers, records: { calls, turns, run: { status, steps, inputTokens, modelTurns, toolCalls } }, counts: { ...dynamo.lostAnswers! } };
}

describe('a DynamoDB ledger update whose answer was lost after it committed', () => {
  it.each(PUTS.map(([name, sk], index) => [name, sk, index + 1] as const))('%s (%s) comes out as answered: the SDK retried, and the ledger knew its own write', async (_name, sk, put) => {
    const delivered = await scenario();
    await dynamo!.close();
    expect(delivered.counts.lost).toBe(0);
    const lost = await scenario(put);
    expect(lost.counts).toMatchObject({ lost: 1, retried: 1 });
    expect(lost.counts.lostWrites).toEqual([`PutItem RUN#r1|${sk}`]);
    expect(lost.answers).toEqual(delivered.answers);
    expect(lost.records).toEqual(delivered.records);
  });
});

describe("a prune's conditional DeleteItem whose answer was lost after it deleted", () => {
  async function pruned(lost: boolean) {
    // Only the first DeleteItem that succeeds (a run record's, IF its seal is the one read) loses its answer.
    dynamo = await startDynamo({ lostAnswers: { every: 1_000, first: lost ? 1 : 1_000, operations: ['DeleteItem'] } });
    await ensureTable(dynamo.client, ledgerTableFromTemplate(await cachedTemplate('agent'), 'ledger'));
    // One key for both: a prune record's digest covers the seals of what it pruned.
    const ledger = new DynamoDbLedger(dynamo.client, 'ledger', hmacSealer(Buffer.alloc(32, 7)));
    await sixRuns(ledger);
    const records = await ledger.prune(at(25), at(100));
    const left = await Promise.all(['old', 'long'].map((runId) => ledger.getRun(runId)));
    return { records, left, problems: await ledger.verifyPrunes(), counts: { ...dynamo.lostAnswers! } };
  }

  it('prunes the run as if answered: the SDK retried, and the ledger found the item gone', async () => {
    const delivered = await pruned(false);
    await dynamo!.close();
    const lost = await pruned(true);
    expect(lost.counts).toMatchObject({ lost: 1, retried: 1, lostWrites: [expect.stringMatching(/^DeleteItem RUN#\S+\|RUN$/)] });
    expect(delivered.records[0]?.runIds.length).toBeGreaterThan(0);
    expect(lost.records).toEqual(delivered.records);
    expect(lost.left).toEqual([undefined, undefined]);
    expect(lost.problems).toEqual([]);
  });
});
