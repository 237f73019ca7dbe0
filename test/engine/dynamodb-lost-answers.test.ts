import { afterEach, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { loadReport, type RunReport } from '../../lambdas/runs/report.js';
import { verifyRun } from '../../lambdas/ledger/seal.js';
import type { DynamoDbLostAnswers } from '../../local/aws/dynamodb-lost-answers.js';
import { duplicatePayments, sampleDay, startHarness, type Harness } from '../support/refund-harness.js';
import { expiringApprovals } from '../support/manual-clock.js';

/**
 * DynamoDB may answer a write that committed with a 500 InternalServerError, or lose the answer
 * with the connection; the SDK retries it, and the retry meets the write that landed (a conditional
 * put fails its condition; a transaction carries its ClientRequestToken). A run on the DynamoDB
 * ledger must come out exactly as it does with every answer delivered: local/aws/dynamodb-lost-answers.ts
 * loses the answers, the SDK retries with its own backoff. (The embedded ledger writes in process:
 * it has no answer to lose.)
 *
 * Without the ledger recognising its own landed write (lambdas/ledger/dynamodb-ledger.ts
 * `landedEarlier`), { every: 5 } fails the run (completeCall: "call … is not in flight") and
 * { every: 3, first: 1 } never ends (a claim that takes its own in-flight claim for another's
 * waits out a lease the manual clock never ends).
 */

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stack.close();
  harness = undefined;
});

/** The sample day on dynalite, each approval expiring on the clock: its report, payments and what the twin did. */
async function sampleRun(runId: string, lostAnswers?: DynamoDbLostAnswers) {
  harness = await startHarness({ ledger: 'dynalite', ...expiringApprovals(), ...(lostAnswers && { dynamoDbLostAnswers: lostAnswers }) });
  const { stack } = harness;
  const finished = await harness.run({ runId, input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 1 } });
  const report = (await loadReport(stack.ledger, runId, new Date(), refundReconciler))!;
  const { calls } = await stack.ledger.listConversation(runId);
  const outcome = {
    status: finished.status,
    output: JSON.parse(finished.output ?? 'null') as unknown,
    // A failed execution's error and cause, as the state machine ended it.
    failure: finished.status === 'SUCCEEDED' ? undefined : { error: finished.error, cause: finished.cause },
    verified: (await verifyRun(stack.ledger, runId)).problems,
    duplicates: duplicatePayments(stack),
    refunds: stack.world.payments.refunds().length,
    report: comparable(report),
    // Every call once, with its outcome, result (but its times and approval ids: each run's own) and attempts.
    calls: calls.map(({ turn, call, name, status, outcome, result, attempts }) => ({ turn, call, name, status, outcome, result: result?.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>').replace(/apv_[\w-]+/g, '<approval>'), attempts })),
  };
  const counts = stack.dynamoDbLostAnswers && { ...stack.dynamoDbLostAnswers, lostWrites: [...stack.dynamoDbLostAnswers.lostWrites] };
  await stack.close();
  harness = undefined;
  return { outcome, counts };
}

/** What two runs of the same day share: all but the times. */
function comparable(report: RunReport) {
  const { steps, modelTurns, toolCalls, tokens, dollars, summary, approvals, inFlight, status } = report as RunReport & { status?: string };
  return { steps, modelTurns, toolCalls, tokens, dollars, summary, approvals, inFlight, status };
}

/** The run with every answer delivered: the outcome each case must match, made once for the file by whichever test asks first. */
let delivered: ReturnType<typeof sampleRun> | undefined;

/** Runs the sample day losing `lostAnswers`' answers, holds it to the day with every answer delivered, and answers what the twin did. */
async function sameAsDelivered(lostAnswers: DynamoDbLostAnswers) {
  const expected = (await (delivered ??= sampleRun('lost-answers'))).outcome;
  expect(expected).toMatchObject({ status: 'SUCCEEDED', verified: [], duplicates: [], refunds: 16 });
  const lost = await sampleRun('lost-answers', lostAnswers);
  expect(lost.outcome).toEqual(expected);
  // The twin lost answers, and the SDK sent each of those writes again.
  expect(lost.counts!.lost).toBeGreaterThan(10);
  expect(lost.counts!.retried).toBe(lost.counts!.lost);
  return lost.counts!;
}

describe('a DynamoDB write whose answer was lost after it committed, retried by the SDK', () => {
  it.each([{ every: 4 }, { every: 5 }, { every: 7, first: 3 }, { every: 11, first: 1, as: 'ECONNRESET' as const }])(
    'leaves the sample day as every answer delivered would (%o)',
    async (lostAnswers) => void (await sameAsDelivered(lostAnswers)),
    60_000,
  );

  it('leaves the sample day as every answer delivered would, every 3rd answer lost from the first: every kind of write among them (run creation, turns, claims and effects, call records, counters, approvals and their tokens, the run item)', async () => {
    const { lostWrites } = await sameAsDelivered({ every: 3, first: 1 });
    const kinds = {
      'run creation': /^TransactWriteItems PRUNED\S* RUN#\S+\|RUN$/,
      'a turn counted on the run': /^TransactWriteItems RUN#\S+\|TURN#\d{4} RUN#\S+\|RUN/,
      'a claim of a call and its effect, counted': /^TransactWriteItems RUN#\S+\|TURN#\d{4}#CALL#\d{2} EFFECT#/,
      'an effect completed with its call': /^TransactWriteItems EFFECT#\S+ RUN#\S+\|TURN#\d{4}#CALL#\d{2}$/,
      'a call record alone': /^PutItem RUN#\S+\|TURN#\d{4}#CALL#\d{2}$/,
      'an aggregate': /^PutItem AGG#/,
      'an approval': /^PutItem RUN#\S+\|TURN#\d{4}#CALL#\d{2}#APPROVAL$/,
      'a task token': /^PutItem TOKEN#/,
      'the run item (counters, its end)': /^PutItem RUN#\S+\|RUN$/,
    };
    const unmet = Object.entries(kinds).filter(([, pattern]) => !lostWrites.some((write) => pattern.test(write)));
    expect(unmet.map(([kind]) => kind)).toEqual([]);
  }, 60_000);
});
