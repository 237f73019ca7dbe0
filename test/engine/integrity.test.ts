import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { createRecoverRun } from '../../lambdas/steps/recover-run.js';
import { localAwsConfig } from '../../local/services/aws-config.js';
import { LEDGER_TABLE } from '../../local/runtime/local-stack.js';
import { startHarness, type Harness } from '../support/refund-harness.js';

/**
 * A ledger altered mid-run (on dynalite, with the SDK, behind the ledger's back: what anyone with
 * table access could do) stops the run with Ledger.IntegrityError at its next step; nothing more is
 * paid; recovery ignores it and a resume is refused.
 */

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stack.close();
  harness = undefined;
});

describe('a ledger altered mid-run', () => {
  it('stops the run at its next step with the integrity error, pays nothing more, and is never resumed', async () => {
    let paidAtDamage: number | undefined;
    let damage: (() => Promise<void>) | undefined;
    harness = await startHarness({
      ledger: 'dynalite',
      day: makeSampleDay(7, { plain: 3, already_refunded: 0, mismatch: 0, large: 0 }),
      // Once the second model turn is recorded and counted (one write), its budget is raised in the table: a changed run record.
      decorateLedger: (ledger: Ledger): Ledger =>
        new Proxy(ledger, {
          get: (target, method: keyof Ledger) =>
            method !== 'recordTurn'
              ? (target[method] as (...args: unknown[]) => unknown).bind(target)
              : async (...args: Parameters<Ledger['recordTurn']>) => {
                  const stored = await target.recordTurn(...args);
                  if (args[1]?.stepKey === 'turn:2' && damage) await damage();
                  return stored;
                },
        }),
    });
    const { stack } = harness;
    const endpoint = (stack.endpoints as { dynamodb?: string }).dynamodb!;
    const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ ...localAwsConfig, endpoint }));
    damage = async () => {
      damage = undefined;
      paidAtDamage = stack.world.payments.refunds().length;
      await doc.send(new UpdateCommand({ TableName: LEDGER_TABLE, Key: { pk: 'RUN#altered', sk: 'RUN' }, UpdateExpression: 'SET config.maxDollars = :lots', ExpressionAttributeValues: { ':lots': 9999 } }));
    };

    const finished = await harness.run({ runId: 'altered', input: { date: '2026-11-28' } });
    expect(paidAtDamage).toBeDefined();
    expect(finished.status).toBe('FAILED');
    expect(finished.error).toBe('Ledger.IntegrityError');
    expect(finished.cause).toMatch(/ledger integrity: run altered, record RUN fails verification: its seal does not match its content and key/);
    expect(stack.world.payments.refunds()).toHaveLength(paidAtDamage!);

    const started: string[] = [];
    const recover = createRecoverRun({ ledger: stack.ledger, clock: { now: () => new Date() }, starter: { start: async (name) => (started.push(name), { executionArn: `arn:${name}` }) } });
    const verdict = await recover({ runId: 'altered', executionArn: finished.executionArn, status: 'FAILED', endedAt: new Date().toISOString(), error: finished.error! });
    expect(verdict).toMatchObject({ action: 'ignored', reason: 'the run is failed (Ledger.IntegrityError)' });
    expect(started).toEqual([]);
    // The failure is the run's: recorded with its reason (the write restored the sealed content).
    expect(await stack.ledger.getRun('altered')).toMatchObject({ status: 'failed', error: { error: 'Ledger.IntegrityError', cause: expect.stringMatching(/record RUN fails verification/) } });

    const resumed = await harness.run({ runId: 'altered', input: { date: '2026-11-28' } });
    expect(resumed.status).toBe('FAILED');
    expect(resumed.error).toBe('Ledger.IntegrityError');
    expect(resumed.cause).toMatch(/stopped on a ledger integrity failure .*savepoint verify altered/);
    expect(stack.world.payments.refunds()).toHaveLength(paidAtDamage!);
  }, 180_000);
});
