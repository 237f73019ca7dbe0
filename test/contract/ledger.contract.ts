import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BreakerState } from '../../lambdas/guards/breaker.js';
import { BlobIntegrityError, parseBlobRef, readResult, resolveResults, storeResult } from '../../lambdas/ledger/blobs.js';
import type { DamagedRunOptions, Ledger } from '../../lambdas/ledger/ledger.js';
import { createClient } from '../../client/index.js';
import { verifyRun } from '../../lambdas/ledger/seal.js';
import {
  RunConfig,
  ZERO_COUNTERS,
  type ApprovalRecord,
  type GuardEvent,
  type RecoveryRecord,
  type RunRecord,
  type ToolCallRecord,
  type TurnRecord,
} from '../../lambdas/ledger/records.js';

/** A ledger for one test, and how to dispose of it. */
export interface LedgerUnderTest {
  ledger: Ledger;
  close?: () => void | Promise<void>;
  /**
   * Damages the backing store behind the ledger's back (the items of one run, as stored: record
   * attributes and seal, by sort key; delete a key to lose the record) and returns the ledger to
   * read it with (reopened, for a ledger that reads its store when it opens). Absent for a ledger
   * whose store is only its own memory.
   */
  damage?: (runId: string, edit: (items: Map<string, Record<string, unknown>>) => void) => Promise<Ledger>;
}

/** Either what `check` found (the problems it reports) or the error reading the damaged ledger raised. */
async function afterDamage(under: LedgerUnderTest, edit: (items: Map<string, Record<string, unknown>>) => void, check: (ledger: Ledger) => Promise<string>): Promise<string> {
  try {
    return await check(await under.damage!('r1', edit));
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}

/**
 * The ledger's contract: what every implementation (DynamoDB, embedded in memory or on disk)
 * must do, in the semantics of the DynamoDB ledger's conditional writes. Each test gets a fresh,
 * empty ledger from `makeLedger`; times come from the `now` arguments, never from a clock.
 *
 * The fixtures below are the only place that knows the records' domain fields.
 */
export function describeLedgerContract(name: string, makeLedger: () => Promise<LedgerUnderTest>, options: { damageable?: boolean } = {}): void {
  describe(`ledger contract: ${name}`, () => {
    let ledger: Ledger;
    let close: LedgerUnderTest['close'];
    let under: LedgerUnderTest;

    beforeEach(async () => {
      under = await makeLedger();
      ({ ledger, close } = under);
    });
    afterEach(async () => {
      await close?.();
    });

    describe('the run record', () => {
      it('is created once: the run id is the idempotency key', async () => {
        expect(await ledger.createRun(run('r1'))).toBe(true);
        expect(await ledger.createRun({ ...run('r1'), prompt: 'another' })).toBe(false);
        expect(await ledger.getRun('r1')).toMatchObject({ prompt: 'Reconcile', executions: ['arn:1'] });
      });

      it('reads back exactly what was written', async () => {
        await ledger.createRun(run('r1'));
        expect(await ledger.getRun('r1')).toEqual(run('r1'));
      });

      it('is undefined for an unknown run', async () => {
        expect(await ledger.getRun('nope')).toBeUndefined();
      });

      it('keeps what it stored when the caller changes the object it wrote or read', async () => {
        const written = run('r1');
        await ledger.createRun(written);
        written.config.maxSteps = 1;
        written.executions.push('arn:mutated');
        const read = (await ledger.getRun('r1'))!;
        read.config.maxSteps = 2;
        expect(await ledger.getRun('r1')).toEqual(run('r1'));
      });

      it('lists runs newest first, up to a limit', async () => {
        await ledger.createRun(run('old', { createdAt: at(0).toISOString() }));
        await ledger.createRun(run('new', { createdAt: at(20).toISOString() }));
        await ledger.createRun(run('mid', { createdAt: at(10).toISOString() }));
        expect((await ledger.listRuns()).map((listed) => listed.runId)).toEqual(['new', 'mid', 'old']);
        expect((await ledger.listRuns(2)).map((listed) => listed.runId)).toEqual(['new', 'mid']);
      });

      it('lists only runs, not the other records of their partitions', async () => {
        await ledger.createRun(run('r1'));
        await ledger.recordTurn(turn(1));
        await ledger.claimCall(call(), at(0));
        await ledger.setGlobalKill(kill('ops'));
        expect(await ledger.listRuns()).toEqual([run('r1')]);
      });
    });

    describe('attaching an execution', () => {
      it('appends the execution, marks the run running and clears how it last ended', async () => {
        await ledger.createRun(run('r1'));
        await ledger.finishRun('r1', { status: 'failed', stopReason: 'crashed', error: { error: 'Agent.Transient', cause: 'x' } }, at(5));
        const attached = await ledger.attachExecution('r1', 'arn:2', at(10), { fingerprint: 'f2', definitionHash: 'd2' });
        expect(attached).toMatchObject({ executionArn: 'arn:2', executions: ['arn:1', 'arn:2'], status: 'running', updatedAt: at(10).toISOString() });
        expect(attached).toMatchObject({ fingerprint: 'f2', definitionHash: 'd2' });
        expect(attached).not.toHaveProperty('finishedAt');
        expect(attached).not.toHaveProperty('stopReason');
        expect(attached).not.toHaveProperty('error');
        expect(await ledger.getRun('r1')).toEqual(attached);
      });

      it('keeps the fingerprint when none is given', async () => {
        await ledger.createRun(run('r1'));
        expect(await ledger.attachExecution('r1', 'arn:2', at(10))).toMatchObject({ fingerprint: 'f' });
      });

      it('with a migration, rebinds the run to the new version and appends the migration, in order', async () => {
        await ledger.createRun({ ...run('r1'), agentVersion: '1' });
        const first = { by: 'ops', at: at(10).toISOString(), from: { version: '1', fingerprint: 'f', executionArn: 'arn:1' }, to: { version: '2', fingerprint: 'f2', executionArn: 'arn:2' } };
        const migrated = await ledger.attachExecution('r1', 'arn:2', at(10), { previousArn: 'arn:1', fingerprint: 'f2', migration: first });
        expect(migrated).toMatchObject({ executionArn: 'arn:2', fingerprint: 'f2', agentVersion: '2', migrations: [first] });
        const second = { ...first, from: first.to, to: { version: '3', fingerprint: 'f3', executionArn: 'arn:3' } };
        await ledger.attachExecution('r1', 'arn:3', at(11), { previousArn: 'arn:2', fingerprint: 'f3', migration: second });
        expect(await ledger.getRun('r1')).toMatchObject({ agentVersion: '3', fingerprint: 'f3', migrations: [first, second] });
        // A migration that lost the race to another execution records nothing.
        expect(await ledger.attachExecution('r1', 'arn:4', at(12), { previousArn: 'arn:2', fingerprint: 'f4', migration: { ...second, to: { fingerprint: 'f4', executionArn: 'arn:4' } } })).toBeUndefined();
        expect((await ledger.getRun('r1'))!.migrations).toHaveLength(2);
      });

      it('with previousArn, attaches only while that execution still drives the run', async () => {
        await ledger.createRun(run('r1'));
        expect(await ledger.attachExecution('r1', 'arn:2', at(1), { previousArn: 'arn:1' })).toMatchObject({ executionArn: 'arn:2' });
        expect(await ledger.attachExecution('r1', 'arn:3', at(2), { previousArn: 'arn:1' })).toBeUndefined();
        expect(await ledger.getRun('r1')).toMatchObject({ executionArn: 'arn:2', executions: ['arn:1', 'arn:2'] });
      });

      it('lets one of two racing resumes take over the run', async () => {
        await ledger.createRun(run('r1'));
        const resumes = await Promise.all(
          ['arn:a', 'arn:b', 'arn:c'].map((arn) => ledger.attachExecution('r1', arn, at(1), { previousArn: 'arn:1' })),
        );
        const winners = resumes.filter((resumed) => resumed !== undefined);
        expect(winners).toHaveLength(1);
        expect((await ledger.getRun('r1'))!.executions).toEqual(['arn:1', winners[0]!.executionArn]);
      });

      it('fails for an unknown run: undefined with previousArn, an error without', async () => {
        expect(await ledger.attachExecution('nope', 'arn:2', at(1), { previousArn: 'arn:1' })).toBeUndefined();
        await expect(ledger.attachExecution('nope', 'arn:2', at(1))).rejects.toThrow(/conditional/i);
        expect(await ledger.getRun('nope')).toBeUndefined();
      });
    });

    describe('recording a recovery', () => {
      it('records the first recovery of the execution that drives the run', async () => {
        await ledger.createRun(run('r1'));
        expect(await ledger.recordRecovery('r1', recovery('arn:1@1'), { executionArn: 'arn:1' })).toBe(true);
        expect(await ledger.getRun('r1')).toMatchObject({ recovery: recovery('arn:1@1'), updatedAt: recovery('arn:1@1').at });
      });

      it('ignores a second delivery of the same ended execution', async () => {
        await ledger.createRun(run('r1'));
        await ledger.recordRecovery('r1', recovery('arn:1@1'), { executionArn: 'arn:1' });
        expect(await ledger.recordRecovery('r1', recovery('arn:1@1', 'again'), { executionArn: 'arn:1' })).toBe(false);
        expect((await ledger.getRun('r1'))!.recovery!.reason).toBe('failed');
      });

      it('records the next recovery only from the key it read', async () => {
        await ledger.createRun(run('r1'));
        await ledger.recordRecovery('r1', recovery('arn:1@1'), { executionArn: 'arn:1' });
        expect(await ledger.recordRecovery('r1', recovery('arn:1@2'), { executionArn: 'arn:1', previousKey: 'arn:1@0' })).toBe(false);
        expect(await ledger.recordRecovery('r1', recovery('arn:1@2'), { executionArn: 'arn:1', previousKey: 'arn:1@1' })).toBe(true);
        expect((await ledger.getRun('r1'))!.recovery!.key).toBe('arn:1@2');
      });

      it('refuses a recovery for an execution that no longer drives the run, or for an unknown run', async () => {
        await ledger.createRun(run('r1'));
        await ledger.attachExecution('r1', 'arn:2', at(1));
        expect(await ledger.recordRecovery('r1', recovery('arn:1@1'), { executionArn: 'arn:1' })).toBe(false);
        expect(await ledger.recordRecovery('nope', recovery('arn:1@1'), { executionArn: 'arn:1' })).toBe(false);
        expect(await ledger.getRun('r1')).not.toHaveProperty('recovery');
      });

      it('lets one of racing recoveries win', async () => {
        await ledger.createRun(run('r1'));
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, index) => ledger.recordRecovery('r1', recovery(`arn:1@${index}`), { executionArn: 'arn:1' })),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
      });
    });

    describe('finishing a run', () => {
      it('records the outcome and when it ended', async () => {
        await ledger.createRun(run('r1'));
        const finished = await ledger.finishRun('r1', { status: 'stopped', stopReason: 'budget: steps' }, at(60));
        expect(finished).toMatchObject({ status: 'stopped', stopReason: 'budget: steps', finishedAt: at(60).toISOString(), updatedAt: at(60).toISOString() });
        expect(await ledger.getRun('r1')).toEqual(finished);
      });

      it('records an error', async () => {
        await ledger.createRun(run('r1'));
        const error = { error: 'Agent.InvalidInput', cause: 'bad args' };
        expect(await ledger.finishRun('r1', { status: 'failed', error }, at(1))).toMatchObject({ status: 'failed', error });
      });

      it('fails for an unknown run, and creates nothing', async () => {
        await expect(ledger.finishRun('nope', { status: 'succeeded' }, at(1))).rejects.toThrow(/conditional/i);
        expect(await ledger.getRun('nope')).toBeUndefined();
      });
    });

    describe('kill switches', () => {
      it('kills a run; the first kill stands', async () => {
        await ledger.createRun(run('r1'));
        expect(await ledger.killRun('r1', kill('alice'))).toBe(true);
        expect(await ledger.killRun('r1', kill('bob'))).toBe(true);
        expect((await ledger.getRun('r1'))!.killed).toEqual(kill('alice'));
      });

      it('does not kill an unknown run', async () => {
        expect(await ledger.killRun('nope', kill('alice'))).toBe(false);
        expect(await ledger.getRun('nope')).toBeUndefined();
      });

      it('sets, reads and clears the global kill', async () => {
        expect(await ledger.getGlobalKill()).toBeUndefined();
        await ledger.setGlobalKill(kill('ops'));
        expect(await ledger.getGlobalKill()).toEqual(kill('ops'));
        await ledger.setGlobalKill(undefined);
        expect(await ledger.getGlobalKill()).toBeUndefined();
      });
    });

    describe('guard events', () => {
      it('appends an event once per distinct reason, in order', async () => {
        await ledger.createRun(run('r1'));
        await ledger.recordGuardEvent('r1', guardEvent('steps at 80%', 1));
        await ledger.recordGuardEvent('r1', guardEvent('steps at 80%', 2));
        await ledger.recordGuardEvent('r1', guardEvent('tokens at 80%', 3));
        expect((await ledger.getRun('r1'))!.guardEvents).toEqual([guardEvent('steps at 80%', 1), guardEvent('tokens at 80%', 3)]);
      });

      it('records a reason once when it is reported concurrently', async () => {
        await ledger.createRun(run('r1'));
        await Promise.all(Array.from({ length: 20 }, (_, index) => ledger.recordGuardEvent('r1', guardEvent('loop', index))));
        expect((await ledger.getRun('r1'))!.guardEvents).toHaveLength(1);
      });

      it('ignores an event for an unknown run', async () => {
        await ledger.recordGuardEvent('nope', guardEvent('loop', 1));
        expect(await ledger.getRun('nope')).toBeUndefined();
      });
    });

    describe('counting steps', () => {
      it('counts a step once, however often it is retried', async () => {
        await ledger.createRun(run('r1'));
        expect(await ledger.countStep('r1', 'turn:1', { steps: 1, inputTokens: 10, costMicros: 7 })).toBe(true);
        expect(await ledger.countStep('r1', 'turn:1', { steps: 1, inputTokens: 10, costMicros: 7 })).toBe(false);
        expect(await ledger.countStep('r1', 'call:1:1', { steps: 1, toolCalls: 1 })).toBe(true);
        expect(await ledger.getRun('r1')).toMatchObject({ steps: 2, inputTokens: 10, costMicros: 7, toolCalls: 1, outputTokens: 0 });
      });

      it('counts 50 concurrent retries of the same step once', async () => {
        await ledger.createRun(run('r1'));
        const results = await Promise.all(Array.from({ length: 50 }, () => ledger.countStep('r1', 'turn:9', { steps: 1, inputTokens: 5 })));
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await ledger.getRun('r1')).toMatchObject({ steps: 1, inputTokens: 5 });
      });

      it('adds every one of 50 concurrent distinct steps: no lost update', async () => {
        await ledger.createRun(run('r1'));
        await Promise.all(Array.from({ length: 50 }, (_, index) => ledger.countStep('r1', `call:1:${index}`, { steps: 1, costMicros: 3 })));
        expect(await ledger.getRun('r1')).toMatchObject({ steps: 50, costMicros: 150 });
      });

      it('does not count a step of an unknown run', async () => {
        expect(await ledger.countStep('nope', 'turn:1', { steps: 1 })).toBe(false);
        expect(await ledger.getRun('nope')).toBeUndefined();
      });

      it('keeps the rest of the run record as it was', async () => {
        await ledger.createRun(run('r1'));
        await ledger.countStep('r1', 'turn:1', { steps: 1 });
        expect(await ledger.getRun('r1')).toEqual({ ...run('r1'), steps: 1 });
      });
    });

    describe('model turns', () => {
      it('records a turn once: a second recording returns the first', async () => {
        expect(await ledger.recordTurn(turn(1))).toEqual(turn(1));
        expect(await ledger.recordTurn(turn(1, 'a different answer'))).toEqual(turn(1));
        expect(await ledger.getTurn('r1', 1)).toEqual(turn(1));
      });

      it('returns the same first turn to every concurrent recording', async () => {
        const recorded = await Promise.all(Array.from({ length: 10 }, (_, index) => ledger.recordTurn(turn(1, `answer ${index}`))));
        const first = (await ledger.getTurn('r1', 1))!;
        for (const each of recorded) expect(each).toEqual(first);
      });

      it('stores a tool use from the model as given, keys that name object methods included', async () => {
        const input = JSON.parse('{"constructor":"refund","hasOwnProperty":true}') as Record<string, unknown>;
        const recorded = { ...turn(1), content: [{ type: 'tool_use' as const, id: 'toolu_1', name: 'lookup', input }] };
        expect(await ledger.recordTurn(recorded)).toEqual(recorded);
        expect(await ledger.getTurn('r1', 1)).toEqual(recorded);
      });

      it('is undefined for a turn never recorded', async () => {
        await ledger.recordTurn(turn(1));
        expect(await ledger.getTurn('r1', 2)).toBeUndefined();
        expect(await ledger.getTurn('r2', 1)).toBeUndefined();
      });
    });

    describe('claiming a tool call', () => {
      it('claims a call with no record: stored as given, in flight, first attempt', async () => {
        const claim = await ledger.claimCall(call(), at(0));
        expect(claim).toEqual({ claimed: true, record: { ...call(), status: 'in_flight', attempts: 1 } });
        expect(await ledger.getCall('r1', 3, 1)).toEqual({ ...call(), status: 'in_flight', attempts: 1 });
      });

      it('stores arguments from outside as given, keys that name object methods included', async () => {
        // Tool arguments come from the model. (An own "__proto__" key is the one exception: the
        // AWS SDK's marshalling drops it; the embedded ledger keeps it, as a plain key.)
        const args = JSON.parse('{"constructor":"c","toString":{"valueOf":1},"emoji":"✓","deep":[[{"a":null}]]}') as Record<string, unknown>;
        await ledger.claimCall(call({ args }), at(0));
        expect((await ledger.getCall('r1', 3, 1))!.args).toEqual(args);
      });

      it('is undefined for a call never claimed', async () => {
        expect(await ledger.getCall('r1', 3, 1)).toBeUndefined();
      });

      it('lets exactly one of 50 concurrent attempts claim it', async () => {
        const claims = await Promise.all(Array.from({ length: 50 }, () => ledger.claimCall(call(), at(0))));
        expect(claims.filter((claim) => claim.claimed)).toHaveLength(1);
        for (const claim of claims) if (!claim.claimed) expect(claim.existing).toMatchObject({ status: 'in_flight', attempts: 1 });
        expect((await ledger.getCall('r1', 3, 1))!.attempts).toBe(1);
      });

      it('refuses a second claim while the lease is live, and allows a takeover once it expired', async () => {
        await ledger.claimCall(call(), at(0));
        const blocked = await ledger.claimCall(call({ leaseUntil: at(60).toISOString() }), at(10));
        expect(blocked).toMatchObject({ claimed: false, existing: { status: 'in_flight', attempts: 1, leaseUntil: at(30).toISOString() } });
        const takeover = await ledger.claimCall(call({ leaseUntil: at(90).toISOString() }), at(31));
        expect(takeover).toMatchObject({ claimed: true, record: { attempts: 2, leaseUntil: at(90).toISOString(), idempotencyKey: 'r1:3:toolu_003_1' } });
      });

      it('refuses a takeover at the very instant the lease ends', async () => {
        await ledger.claimCall(call(), at(0));
        expect(await ledger.claimCall(call(), at(30))).toMatchObject({ claimed: false });
      });

      it('lets exactly one of 50 concurrent takeovers of an expired lease win', async () => {
        await ledger.claimCall(call(), at(0));
        const claims = await Promise.all(Array.from({ length: 50 }, () => ledger.claimCall(call({ leaseUntil: at(200).toISOString() }), at(100))));
        expect(claims.filter((claim) => claim.claimed)).toHaveLength(1);
        expect((await ledger.getCall('r1', 3, 1))!.attempts).toBe(2);
      });

      it('never reclaims a completed call: a retry gets the recorded outcome', async () => {
        await ledger.claimCall(call(), at(0));
        await ledger.completeCall('r1', 3, 1, { outcome: 'ok', result: '{"id":"re_1"}', latencyMs: 5 }, at(1));
        const again = await ledger.claimCall(call(), at(3600));
        expect(again).toMatchObject({ claimed: false, existing: { status: 'completed', result: '{"id":"re_1"}' } });
      });

      it('keeps calls of other turns, calls and runs apart', async () => {
        await ledger.claimCall(call(), at(0));
        expect(await ledger.claimCall(call({ call: 2 }), at(0))).toMatchObject({ claimed: true });
        expect(await ledger.claimCall(call({ turn: 4 }), at(0))).toMatchObject({ claimed: true });
        expect(await ledger.claimCall(call({ runId: 'r2' }), at(0))).toMatchObject({ claimed: true });
      });
    });

    describe('recording a call without a claim (a read)', () => {
      const completed = (overrides: Partial<ToolCallRecord> = {}) =>
        ({ ...call({ effect: 'read', ...overrides }), status: 'completed', outcome: 'ok', result: '{"order":1}', latencyMs: 2, recordedAt: at(1).toISOString() }) as ToolCallRecord & {
          status: 'completed';
        };

      it('records a call with no record, completed, first attempt', async () => {
        expect(await ledger.recordCall(completed(), at(0))).toEqual({ recorded: true, record: { ...completed(), attempts: 1 } });
        expect(await ledger.getCall('r1', 3, 1)).toEqual({ ...completed(), attempts: 1 });
      });

      it('keeps the first outcome: a second recording returns it', async () => {
        await ledger.recordCall(completed(), at(0));
        expect(await ledger.recordCall(completed({ call: 1, toolCallId: 'toolu_003_1' }), at(5))).toMatchObject({ recorded: false, existing: { result: '{"order":1}' } });
        const again = await ledger.recordCall({ ...completed(), result: 'other' }, at(5));
        expect(again).toMatchObject({ recorded: false, existing: { status: 'completed', result: '{"order":1}', attempts: 1 } });
      });

      it('lets exactly one of 50 concurrent recordings win', async () => {
        const results = await Promise.all(Array.from({ length: 50 }, (_, index) => ledger.recordCall({ ...completed(), result: String(index) }, at(0))));
        const winners = results.filter((result) => result.recorded);
        expect(winners).toHaveLength(1);
        expect((await ledger.getCall('r1', 3, 1))!.result).toBe(winners[0]!.record.result);
      });

      it('takes over an in-flight call only once its lease expired', async () => {
        await ledger.claimCall(call(), at(0));
        expect(await ledger.recordCall(completed(), at(30))).toMatchObject({ recorded: false, existing: { status: 'in_flight' } });
        expect(await ledger.recordCall(completed(), at(31))).toMatchObject({ recorded: true, record: { status: 'completed', attempts: 2 } });
      });
    });

    describe('completing and releasing a tool call', () => {
      it('completes an in-flight call with its outcome', async () => {
        await ledger.claimCall(call(), at(0));
        const completed = await ledger.completeCall('r1', 3, 1, { outcome: 'error', result: '{"error":"declined"}', latencyMs: 12 }, at(2));
        expect(completed).toEqual({
          ...call(),
          status: 'completed',
          attempts: 1,
          outcome: 'error',
          result: '{"error":"declined"}',
          latencyMs: 12,
          recordedAt: at(2).toISOString(),
        });
        expect(await ledger.getCall('r1', 3, 1)).toEqual(completed);
      });

      it('completes only an in-flight call, once', async () => {
        await ledger.claimCall(call(), at(0));
        await ledger.completeCall('r1', 3, 1, { outcome: 'ok', result: '1', latencyMs: 1 }, at(1));
        await expect(ledger.completeCall('r1', 3, 1, { outcome: 'ok', result: '2', latencyMs: 1 }, at(2))).rejects.toThrow(/conditional/i);
        expect((await ledger.getCall('r1', 3, 1))!.result).toBe('1');
      });

      it('does not complete a call that was never claimed', async () => {
        await expect(ledger.completeCall('r1', 3, 1, { outcome: 'ok', result: '1', latencyMs: 1 }, at(1))).rejects.toThrow(/conditional/i);
        expect(await ledger.getCall('r1', 3, 1)).toBeUndefined();
      });

      it('completes a call once when completions race', async () => {
        await ledger.claimCall(call(), at(0));
        const results = await Promise.allSettled(
          Array.from({ length: 10 }, (_, index) => ledger.completeCall('r1', 3, 1, { outcome: 'ok', result: String(index), latencyMs: 1 }, at(1))),
        );
        const fulfilled = results.filter((result) => result.status === 'fulfilled');
        expect(fulfilled).toHaveLength(1);
        expect((await ledger.getCall('r1', 3, 1))!.result).toBe((fulfilled[0] as PromiseFulfilledResult<ToolCallRecord>).value.result);
      });

      it('releases the lease of a cleanly failed call so the retry claims at once', async () => {
        await ledger.claimCall(call(), at(0));
        await ledger.releaseCall('r1', 3, 1, at(1));
        expect(await ledger.getCall('r1', 3, 1)).toMatchObject({ status: 'in_flight', leaseUntil: at(1).toISOString() });
        expect(await ledger.claimCall(call(), at(2))).toMatchObject({ claimed: true, record: { attempts: 2 } });
      });

      it('does not release a completed call, nor create one', async () => {
        await ledger.claimCall(call(), at(0));
        const completed = await ledger.completeCall('r1', 3, 1, { outcome: 'ok', result: '1', latencyMs: 1 }, at(1));
        await ledger.releaseCall('r1', 3, 1, at(2));
        expect(await ledger.getCall('r1', 3, 1)).toEqual(completed);
        await ledger.releaseCall('r1', 3, 2, at(2));
        expect(await ledger.getCall('r1', 3, 2)).toBeUndefined();
      });
    });

    describe('approvals', () => {
      it('creates a pending approval and finds it by its opaque id', async () => {
        expect(await ledger.upsertApproval(approval(), 'token-1')).toEqual(approval());
        expect(await ledger.getApproval('r1', 3, 1)).toEqual(approval());
        expect(await ledger.findApproval('apv_0123456789abcdef')).toEqual(approval());
      });

      it('keeps the task token apart: no approval it returns holds it, getTaskToken does', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        await ledger.upsertApproval(budgetApproval(1), 'token-b');
        const returned = [
          await ledger.getApproval('r1', 3, 1),
          await ledger.getBudgetApproval('r1', 'steps', 1),
          await ledger.findApproval('apv_0123456789abcdef'),
          ...(await ledger.listPendingApprovals()),
          ...(await ledger.listConversation('r1')).approvals,
          (await ledger.decideApproval({ runId: 'r1', turn: 3, call: 1 }, { status: 'approved', decidedBy: 'alice' }, at(1))).record,
        ];
        expect(returned).toHaveLength(8);
        for (const record of returned) expect(record).not.toHaveProperty('taskToken');
        expect(JSON.stringify(returned)).not.toContain('token-');
        expect(await ledger.getTaskToken({ runId: 'r1', turn: 3, call: 1 })).toBe('token-1');
        expect(await ledger.getTaskToken(budgetApproval(1))).toBe('token-b');
        expect(await ledger.getTaskToken({ runId: 'r1', turn: 3, call: 2 })).toBeUndefined();
        expect(await ledger.getTaskToken({ runId: 'r2', turn: 3, call: 1 })).toBeUndefined();
      });

      it('finds nothing for an unknown id, call or run', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        expect(await ledger.findApproval('apv_unknown')).toBeUndefined();
        expect(await ledger.getApproval('r1', 3, 2)).toBeUndefined();
        expect(await ledger.getApproval('r2', 3, 1)).toBeUndefined();
      });

      it('keeps the opaque id and refreshes the token when the approval is requested again', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        const again = await ledger.upsertApproval(approval({ approvalId: 'apv_other000000000000' }), 'token-2');
        expect(again).toMatchObject({ approvalId: 'apv_0123456789abcdef', status: 'pending' });
        expect(await ledger.getTaskToken({ runId: 'r1', turn: 3, call: 1 })).toBe('token-2');
        expect(await ledger.findApproval('apv_other000000000000')).toBeUndefined();
      });

      it('records a decision once; the first decision stands', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        const key = { runId: 'r1', turn: 3, call: 1 };
        const decisions = await Promise.all([
          ledger.decideApproval(key, { status: 'approved', decidedBy: 'alice' }, at(1)),
          ledger.decideApproval(key, { status: 'rejected', reason: 'no', decidedBy: 'bob' }, at(1)),
          ledger.decideApproval(key, { status: 'expired', decidedBy: 'timeout' }, at(1)),
        ]);
        const winners = decisions.filter((decision) => decision.decided);
        expect(winners).toHaveLength(1);
        for (const decision of decisions) expect(decision.record).toEqual(winners[0]!.record);
        expect(await ledger.getApproval('r1', 3, 1)).toEqual(winners[0]!.record);
      });

      it('records who decided, when, and why', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        const { record } = await ledger.decideApproval({ runId: 'r1', turn: 3, call: 1 }, { status: 'rejected', reason: 'too much', decidedBy: 'bob' }, at(5));
        expect(record).toEqual({ ...approval(), status: 'rejected', reason: 'too much', decidedBy: 'bob', decidedAt: at(5).toISOString() });
        expect(await ledger.findApproval('apv_0123456789abcdef')).toEqual(record);
      });

      it('records how a decision came, its MAC, the wait and the link it used', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        const decision = { status: 'approved', decidedBy: 'alice@example.com', decidedVia: 'link', decisionMac: 'bWFj', waitedMs: 29_000, linkId: 'link-1' } as const;
        const { record } = await ledger.decideApproval({ runId: 'r1', turn: 3, call: 1 }, decision, at(5));
        expect(record).toEqual({ ...approval(), status: 'approved', reason: '', decidedBy: 'alice@example.com', decidedVia: 'link', decisionMac: 'bWFj', waitedMs: 29_000, usedLinks: ['link-1'], decidedAt: at(5).toISOString() });
        expect(await ledger.findApproval('apv_0123456789abcdef')).toEqual(record);
      });

      it('records the first of two approvals once, and only on a pending approval', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        const key = { runId: 'r1', turn: 3, call: 1 };
        const first = { by: 'bob@example.com', via: 'link', at: at(2).toISOString() } as const;
        const tries = await Promise.all([ledger.recordFirstApproval(key, first, 'link-b'), ledger.recordFirstApproval(key, { ...first, by: 'carol' })]);
        expect(tries.filter((attempt) => attempt.recorded)).toHaveLength(1);
        const stored = await ledger.getApproval('r1', 3, 1);
        expect(stored).toMatchObject({ status: 'pending', firstApproval: { via: 'link' } });
        expect(await ledger.listPendingApprovals()).toHaveLength(1);
        const { record } = await ledger.decideApproval(key, { status: 'approved', decidedBy: 'dave', linkId: 'link-d' }, at(3));
        expect(record.firstApproval).toEqual(stored!.firstApproval);
        expect(record.usedLinks).toEqual([...(stored!.usedLinks ?? []), 'link-d']);
        expect(await ledger.recordFirstApproval(key, first)).toMatchObject({ recorded: false, record: { status: 'approved' } });
      });

      it('records an empty reason when none is given', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        const { record } = await ledger.decideApproval({ runId: 'r1', turn: 3, call: 1 }, { status: 'approved', decidedBy: 'alice' }, at(5));
        expect(record.reason).toBe('');
      });

      it('lets one of 20 concurrent deciders decide', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        const decisions = await Promise.all(
          Array.from({ length: 20 }, (_, index) =>
            ledger.decideApproval({ runId: 'r1', turn: 3, call: 1 }, { status: index % 2 ? 'approved' : 'rejected', decidedBy: `person${index}` }, at(1)),
          ),
        );
        expect(decisions.filter((decision) => decision.decided)).toHaveLength(1);
        expect(new Set(decisions.map((decision) => decision.record.decidedBy)).size).toBe(1);
      });

      it('fails to decide an approval that does not exist', async () => {
        await expect(ledger.decideApproval({ runId: 'r1', turn: 3, call: 1 }, { status: 'approved', decidedBy: 'alice' }, at(1))).rejects.toThrow(
          /no approval/,
        );
      });

      it('lists only pending approvals, and a decided one leaves the list', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        await ledger.upsertApproval(approval({ approvalId: 'apv_second00000000000', call: 2 }), 'token-1');
        expect((await ledger.listPendingApprovals()).map((pending) => pending.approvalId).sort()).toEqual([
          'apv_0123456789abcdef',
          'apv_second00000000000',
        ]);
        await ledger.decideApproval({ runId: 'r1', turn: 3, call: 2 }, { status: 'approved', decidedBy: 'alice' }, at(1));
        expect((await ledger.listPendingApprovals()).map((pending) => pending.approvalId)).toEqual(['apv_0123456789abcdef']);
        // A decided approval is not re-armed by a late request: its decision is returned.
        expect(await ledger.upsertApproval(approval({ call: 2 }), 'token-9')).toMatchObject({ status: 'approved' });
        expect(await ledger.getTaskToken({ runId: 'r1', turn: 3, call: 2 })).toBe('token-1');
        expect((await ledger.listPendingApprovals()).map((pending) => pending.approvalId)).toEqual(['apv_0123456789abcdef']);
      });

      it('lists pending approvals of every run, soonest deadline first', async () => {
        await ledger.upsertApproval(approval({ approvalId: 'apv_b', runId: 'r2', decideBy: at(300).toISOString() }), 'token-1');
        await ledger.upsertApproval(approval({ approvalId: 'apv_a', call: 1, decideBy: at(200).toISOString() }), 'token-1');
        await ledger.upsertApproval(approval({ approvalId: 'apv_c', call: 2, decideBy: at(100).toISOString() }), 'token-1');
        expect((await ledger.listPendingApprovals()).map((pending) => pending.approvalId)).toEqual(['apv_c', 'apv_a', 'apv_b']);
      });

      it('lists nothing when nothing is pending', async () => {
        expect(await ledger.listPendingApprovals()).toEqual([]);
      });
    });

    describe('budget extensions', () => {
      it('keeps a budget approval apart from the call approvals, found by budget, extension and id', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        await ledger.upsertApproval(budgetApproval(1), 'token-1');
        expect(await ledger.getBudgetApproval('r1', 'steps', 1)).toEqual(budgetApproval(1));
        expect(await ledger.getBudgetApproval('r1', 'steps', 2)).toBeUndefined();
        expect(await ledger.getBudgetApproval('r1', 'tokens', 1)).toBeUndefined();
        expect(await ledger.findApproval('apv_budget_steps_1')).toEqual(budgetApproval(1));
        expect(await ledger.getApproval('r1', 3, 1)).toEqual(approval());
      });

      it('decides a budget approval by its budget key, once', async () => {
        await ledger.upsertApproval(budgetApproval(1), 'token-1');
        const key = { runId: 'r1', turn: 0, call: 0, budget: budgetApproval(1).budget };
        expect(await ledger.decideApproval(key, { status: 'approved', decidedBy: 'alice' }, at(1))).toMatchObject({ decided: true, record: { status: 'approved' } });
        expect(await ledger.decideApproval(key, { status: 'rejected', decidedBy: 'bob' }, at(2))).toMatchObject({ decided: false, record: { decidedBy: 'alice' } });
        expect(await ledger.getBudgetApproval('r1', 'steps', 1)).toMatchObject({ status: 'approved' });
      });

      it('applies an approved extension once', async () => {
        await ledger.createRun(run('r1'));
        const extended = await ledger.applyBudgetExtension('r1', 'steps', 1, 600);
        expect(extended).toMatchObject({ config: { maxSteps: 600, maxTokens: 600_000 }, budgetExtensions: { steps: 1 } });
        expect(await ledger.applyBudgetExtension('r1', 'steps', 1, 900)).toEqual(extended);
        expect(await ledger.getRun('r1')).toEqual(extended);
      });

      it('applies the next extension, and ignores a stale one', async () => {
        await ledger.createRun(run('r1'));
        await ledger.applyBudgetExtension('r1', 'steps', 1, 600);
        await ledger.applyBudgetExtension('r1', 'steps', 2, 900);
        expect(await ledger.applyBudgetExtension('r1', 'steps', 1, 600)).toMatchObject({ config: { maxSteps: 900 }, budgetExtensions: { steps: 2 } });
      });

      it('counts extensions per budget', async () => {
        await ledger.createRun(run('r1'));
        await ledger.applyBudgetExtension('r1', 'steps', 1, 600);
        expect(await ledger.applyBudgetExtension('r1', 'dollars', 1, 7.5)).toMatchObject({
          config: { maxSteps: 600, maxDollars: 7.5 },
          budgetExtensions: { steps: 1, dollars: 1 },
        });
      });

      it('applies one of concurrent applications of the same extension', async () => {
        await ledger.createRun(run('r1'));
        await Promise.all([500, 600, 700].map((limit) => ledger.applyBudgetExtension('r1', 'tokens', 1, limit)));
        expect((await ledger.getRun('r1'))!.config.maxTokens).toBe(500);
      });

      it('fails for an unknown run', async () => {
        await expect(ledger.applyBudgetExtension('nope', 'steps', 1, 600)).rejects.toThrow();
      });
    });

    describe('the conversation', () => {
      it('lists turns, calls and approvals of one run in conversation order, whatever the write order', async () => {
        await ledger.createRun(run('r1'));
        await ledger.recordTurn(turn(2));
        await ledger.claimCall(call({ turn: 2, call: 1 }), at(0));
        await ledger.upsertApproval(approval({ turn: 1, call: 2 }), 'token-1');
        await ledger.claimCall(call({ turn: 1, call: 2 }), at(0));
        await ledger.recordTurn(turn(1));
        await ledger.claimCall(call({ turn: 1, call: 1 }), at(0));
        await ledger.recordTurn(turn(10));
        await ledger.recordTurn(turn(1, 'other run', 'r2'));
        await ledger.claimCall(call({ runId: 'r2' }), at(0));
        const { turns, calls, approvals } = await ledger.listConversation('r1');
        expect(turns.map((each) => each.turn)).toEqual([1, 2, 10]);
        expect(turns[0]).toEqual(turn(1));
        expect(calls.map((each) => [each.turn, each.call])).toEqual([
          [1, 1],
          [1, 2],
          [2, 1],
        ]);
        expect(approvals).toEqual([approval({ turn: 1, call: 2 })]);
      });

      it('lists budget approvals with the call approvals', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        await ledger.upsertApproval(budgetApproval(1), 'token-1');
        expect((await ledger.listConversation('r1')).approvals.map((each) => each.approvalId).sort()).toEqual([
          'apv_0123456789abcdef',
          'apv_budget_steps_1',
        ]);
      });

      it('is empty for an unknown run', async () => {
        expect(await ledger.listConversation('nope')).toEqual({ turns: [], calls: [], approvals: [] });
      });

      it('lists from a turn on: that turn, its calls and approvals, and the later ones', async () => {
        await ledger.createRun(run('r1'));
        await ledger.upsertApproval(budgetApproval(1), 'token-1');
        for (const number of [1, 2, 3]) {
          await ledger.recordTurn(turn(number));
          await ledger.claimCall(call({ turn: number }), at(0));
        }
        await ledger.upsertApproval(approval({ turn: 2, call: 1 }), 'token-1');
        const { turns, calls, approvals } = await ledger.listConversation('r1', { fromTurn: 2 });
        expect(turns.map((each) => each.turn)).toEqual([2, 3]);
        expect(calls.map((each) => each.turn)).toEqual([2, 3]);
        expect(approvals).toEqual([approval({ turn: 2, call: 1 })]);
        expect(await ledger.listConversation('r1', { fromTurn: 4 })).toEqual({ turns: [], calls: [], approvals: [] });
      });

      it('shows a call as last written', async () => {
        await ledger.claimCall(call(), at(0));
        await ledger.completeCall('r1', 3, 1, { outcome: 'ok', result: 'done', latencyMs: 1 }, at(1));
        expect((await ledger.listConversation('r1')).calls).toEqual([await ledger.getCall('r1', 3, 1)]);
      });
    });

    describe('loading what a step needs at once', () => {
      it('reads the run, the global kill, the turns, calls and breaker asked for', async () => {
        await ledger.createRun(run('r1'));
        await ledger.setGlobalKill(kill('ops'));
        await ledger.recordTurn(turn(1));
        await ledger.recordTurn(turn(2));
        await ledger.claimCall(call({ turn: 2, call: 1 }), at(0));
        await ledger.claimCall(call({ turn: 2, call: 2 }), at(0));
        await ledger.saveBreaker(breaker('model', 1));
        const read = await ledger.loadStep('r1', {
          turns: [2, 1],
          calls: [
            { turn: 2, call: 2 },
            { turn: 2, call: 1 },
          ],
          breaker: 'model',
        });
        expect(read).toEqual({
          run: await ledger.getRun('r1'),
          globalKill: kill('ops'),
          turns: [turn(2), turn(1)],
          calls: [await ledger.getCall('r1', 2, 2), await ledger.getCall('r1', 2, 1)],
          breaker: await ledger.getBreaker('model'),
        });
      });

      it('leaves out what does not exist', async () => {
        await ledger.setGlobalKill(undefined);
        expect(await ledger.loadStep('nope', { turns: [1], calls: [{ turn: 1, call: 1 }], breaker: 'model' })).toEqual({ turns: [], calls: [] });
        expect(await ledger.loadStep('nope')).toEqual({ turns: [], calls: [] });
      });

      it('reads a key asked for twice once', async () => {
        await ledger.createRun(run('r1'));
        await ledger.recordTurn(turn(1));
        expect((await ledger.loadStep('r1', { turns: [1, 1] })).turns).toEqual([turn(1), turn(1)]);
      });

      it('refuses more keys than one batch reads', async () => {
        await expect(ledger.loadStep('r1', { turns: Array.from({ length: 99 }, (_, index) => index + 1) })).rejects.toThrow(/at most 100/);
      });

      it('hands out copies: changing what it read changes nothing stored', async () => {
        await ledger.createRun(run('r1'));
        const read = await ledger.loadStep('r1');
        read.run!.config.maxSteps = 1;
        expect((await ledger.loadStep('r1')).run).toEqual(run('r1'));
      });
    });

    // Only where there is a store to damage behind the ledger's back (not a ledger's own memory).
    describe.runIf(options.damageable)('tamper evidence (sealed records)', () => {
      /** Run r1 with three counted turns and a completed, counted call of turn 3. */
      const recorded = async () => {
        await ledger.createRun(run('r1'));
        for (const number of [1, 2, 3]) {
          await ledger.recordTurn(turn(number, `turn ${number}`));
          await ledger.countStep('r1', `turn:${number}`, { steps: 1, modelTurns: 1 });
        }
        await ledger.claimCall(call(), at(1));
        await ledger.completeCall('r1', 3, 1, { outcome: 'ok', result: '{"refunded":true}', latencyMs: 5 }, at(2));
        await ledger.countStep('r1', 'call:3:1', { steps: 1, toolCalls: 1 });
      };
      const verified = (on: Ledger) => verifyRun(on, 'r1').then((report) => report.problems.join('\n'));
      const loaded = (on: Ledger) => on.loadStep('r1', { turns: [1, 2, 3], calls: [{ turn: 3, call: 1 }] }).then(() => 'loaded');

      it('verifies an undamaged run, and reads it back', async () => {
        await recorded();
        expect(await verifyRun(ledger, 'r1')).toEqual({ runId: 'r1', records: 5, turns: 3, calls: 1, approvals: 0, problems: [] });
        expect((await ledger.loadStep('r1', { turns: [2] })).turns[0]).toEqual(turn(2, 'turn 2'));
      });

      it.each([
        ['an altered turn', 'TURN#0002', (items: Map<string, Record<string, unknown>>) => {
          items.get('TURN#0002')!['content'] = [{ type: 'text', text: 'refund everyone' }];
        }],
        ['altered counters', 'RUN', (items: Map<string, Record<string, unknown>>) => {
          items.get('RUN')!['steps'] = 0;
        }],
        ['an altered tool result', 'TURN#0003#CALL#01', (items: Map<string, Record<string, unknown>>) => {
          items.get('TURN#0003#CALL#01')!['result'] = '{"refunded":false}';
        }],
        ['two turns swapped', 'TURN#0002', (items: Map<string, Record<string, unknown>>) => {
          const [second, third] = [items.get('TURN#0002')!, items.get('TURN#0003')!];
          items.set('TURN#0002', { ...third, sk: 'TURN#0002' });
          items.set('TURN#0003', { ...second, sk: 'TURN#0003' });
        }],
      ])('refuses %s: loadStep and verify name it', async (_name, record, edit) => {
        await recorded();
        expect(await afterDamage(under, edit, loaded)).toMatch(/^Ledger\.IntegrityError: ledger integrity: /);
        expect(await afterDamage(under, () => {}, verified)).toMatch(new RegExp(`ledger integrity: (run r1, record ${record}|.*ledger\\.jsonl)`));
      });

      it.each([
        ['listRunningRuns', (on: Ledger, options?: DamagedRunOptions) => on.listRunningRuns(options)],
        ['listRuns', (on: Ledger, options?: DamagedRunOptions) => on.listRuns(100, options)],
      ])('%s lists the runs it can trust, and names a damaged one to onDamaged, or throws without it', async (_method, list) => {
        await ledger.createRun(run('r1'));
        await ledger.createRun(run('r2'));
        const alterSteps = (items: Map<string, Record<string, unknown>>) => {
          items.get('RUN')!['steps'] = 7;
        };
        const listed = await afterDamage(under, alterSteps, async (on) => {
          const damaged: string[] = [];
          const runs = await list(on, { onDamaged: (runId, error) => damaged.push(`${runId}: ${error.name}`) });
          return `listed ${runs.map((listedRun) => listedRun.runId).join(',')}; damaged ${damaged.join(',')}`;
        });
        // DynamoDB verifies each run's record alone: r2 is listed, r1 named. The embedded log is one
        // chain: the file is refused as a whole when it opens, naming it.
        expect(listed).toMatch(/^(listed r2; damaged r1: Ledger\.IntegrityError|Ledger\.IntegrityError: ledger integrity: .*ledger\.jsonl.*)$/);
        expect(await afterDamage(under, () => {}, (on) => list(on).then(() => 'listed'))).toMatch(/^Ledger\.IntegrityError: ledger integrity: /);
      });

      it("the client's verify of every run reports a damaged run among the others instead of stopping at it", async () => {
        await ledger.createRun(run('r1'));
        await ledger.createRun(run('r2'));
        const reported = await afterDamage(
          under,
          (items) => {
            items.get('RUN')!['steps'] = 7;
          },
          async (on) =>
            ((await createClient({ ledger: on }).verify('all')) ?? [])
              .map((report) => `${report.runId}: ${report.problems.length === 0 ? 'OK' : report.problems.join('; ')}`)
              .sort()
              .join('\n'),
        );
        expect(reported).toMatch(/^(r1: ledger integrity: run r1, record RUN fails verification: .*\nr2: OK|Ledger\.IntegrityError: ledger integrity: .*ledger\.jsonl.*)$/);
      });

      it.each([
        ['a missing turn', 'TURN#0002', (items: Map<string, Record<string, unknown>>) => items.delete('TURN#0002')],
        ['a missing last turn', 'TURN#0003', (items: Map<string, Record<string, unknown>>) => {
          items.delete('TURN#0003#CALL#01');
          items.delete('TURN#0003');
        }],
        ['a missing call', 'TURN#…#CALL#…', (items: Map<string, Record<string, unknown>>) => items.delete('TURN#0003#CALL#01')],
        ['a forged turn', 'TURN#0004', (items: Map<string, Record<string, unknown>>) => {
          items.set('TURN#0004', { ...items.get('TURN#0003')!, sk: 'TURN#0004', turn: 4, seal: 'forged' });
        }],
      ])('refuses %s: verify names it', async (_name, record, edit) => {
        await recorded();
        expect(await afterDamage(under, edit, verified)).toMatch(new RegExp(`ledger integrity: (run r1, record ${record.replace(/[#…]/g, '.')}|.*ledger\\.jsonl)`));
      });
    });

    describe('the breaker store', () => {
      it('has no state for a breaker never saved', async () => {
        expect(await ledger.getBreaker('model')).toBeUndefined();
      });

      it('creates a breaker with version 1 and reads it back', async () => {
        expect(await ledger.saveBreaker(breaker('model', 1))).toBe(true);
        expect(await ledger.getBreaker('model')).toMatchObject(breaker('model', 1));
      });

      it('saves only on top of the version read', async () => {
        await ledger.saveBreaker(breaker('model', 1));
        expect(await ledger.saveBreaker(breaker('model', 1, 'open'))).toBe(false);
        expect(await ledger.saveBreaker(breaker('model', 3, 'open'))).toBe(false);
        expect(await ledger.saveBreaker(breaker('model', 2, 'open'))).toBe(true);
        expect(await ledger.getBreaker('model')).toMatchObject(breaker('model', 2, 'open'));
      });

      it('does not create a breaker from a later version', async () => {
        expect(await ledger.saveBreaker(breaker('model', 2))).toBe(false);
        expect(await ledger.getBreaker('model')).toBeUndefined();
      });

      it('keeps breakers apart by name', async () => {
        await ledger.saveBreaker(breaker('model', 1, 'open'));
        expect(await ledger.saveBreaker(breaker('tools', 1))).toBe(true);
        expect(await ledger.getBreaker('model')).toMatchObject({ state: 'open' });
        expect(await ledger.getBreaker('tools')).toMatchObject({ state: 'closed' });
      });

      it('lets one of 20 concurrent saves of the same version win', async () => {
        await ledger.saveBreaker(breaker('model', 1));
        const saves = await Promise.all(
          Array.from({ length: 20 }, (_, index) => ledger.saveBreaker({ ...breaker('model', 2), trips: index })),
        );
        expect(saves.filter(Boolean)).toHaveLength(1);
        expect(await ledger.getBreaker('model')).toMatchObject({ version: 2, trips: saves.indexOf(true) });
      });
    });

    describe('the runs marked running (the sweeper\'s query)', () => {
      it('lists a run while it runs, not once it ended, and again when an execution resumes it', async () => {
        await ledger.createRun(run('r1'));
        await ledger.createRun(run('r2', { createdAt: at(5).toISOString() }));
        expect((await ledger.listRunningRuns()).map((r) => r.runId)).toEqual(['r2', 'r1']);
        await ledger.finishRun('r1', { status: 'failed', error: { error: 'Agent.Transient', cause: 'x' } }, at(10));
        expect((await ledger.listRunningRuns()).map((r) => r.runId)).toEqual(['r2']);
        await ledger.attachExecution('r1', 'arn:exec:r1-2', at(20));
        expect((await ledger.listRunningRuns()).map((r) => r.runId)).toEqual(['r2', 'r1']);
        // The records read back as written: no index attribute shows.
        expect(await ledger.listRunningRuns()).toEqual([await ledger.getRun('r2'), await ledger.getRun('r1')]);
      });

      it('lists nothing else: no other record of a run, no finished run', async () => {
        await ledger.createRun(run('r1'));
        await ledger.recordTurn(turn(1));
        await ledger.finishRun('r1', { status: 'succeeded' }, at(10));
        expect(await ledger.listRunningRuns()).toEqual([]);
      });
    });

    describe('large values by reference (blobs)', () => {
      const big = 'é'.repeat(200_000) + '{"x":"🙂"}'.repeat(30_000); // ~700 KB of multi-byte text: three chunks

      it('stores a large tool result in chunks and reads back exactly the text, verified', async () => {
        const ref = await storeResult(ledger, 'r1', big);
        expect(parseBlobRef(ref)).toEqual({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/), bytes: Buffer.byteLength(big) });
        expect((await ledger.getBlob('r1', parseBlobRef(ref)!.sha256)).length).toBe(3);
        expect(await readResult(ledger, 'r1', parseBlobRef(ref)!)).toBe(big);
      });

      it('keeps a result under the limit as it is', async () => {
        expect(await storeResult(ledger, 'r1', '{"ok":true}')).toBe('{"ok":true}');
      });

      it('is idempotent: storing the same value again changes nothing', async () => {
        const first = await storeResult(ledger, 'r1', big);
        expect(await storeResult(ledger, 'r1', big)).toBe(first);
        expect(await readResult(ledger, 'r1', parseBlobRef(first)!)).toBe(big);
      });

      it('keeps blobs apart by run and digest, and out of the conversation and the run list', async () => {
        await ledger.createRun(run('r1'));
        await storeResult(ledger, 'r1', big);
        expect(await ledger.getBlob('r2', parseBlobRef(await storeResult(ledger, 'r1', big))!.sha256)).toEqual([]);
        expect(await ledger.getBlob('r1', 'f'.repeat(64))).toEqual([]);
        expect(await ledger.listConversation('r1')).toEqual({ turns: [], calls: [], approvals: [] });
        expect((await ledger.listRuns()).map((r) => r.runId)).toEqual(['r1']);
      });

      it('names a missing or damaged blob instead of passing it on', async () => {
        const ref = parseBlobRef(await storeResult(ledger, 'r1', big))!;
        await expect(readResult(ledger, 'r1', { ...ref, sha256: 'a'.repeat(64) })).rejects.toThrow(/ledger integrity: run r1, stored tool result a{64} .* no chunk found/);
        // Chunks that do not hash to the reference: the first chunk replaced.
        const chunks = await ledger.getBlob('r1', ref.sha256);
        await ledger.putBlob('r1', ref.sha256, ['X'.repeat(Buffer.byteLength(chunks[0]!)), ...chunks.slice(1)]);
        await expect(readResult(ledger, 'r1', ref)).rejects.toThrow(BlobIntegrityError);
        await expect(readResult(ledger, 'r1', ref)).rejects.toThrow(/do not match the digest/);
      });

      it('resolves the references of tool calls, and leaves other results alone', async () => {
        const ref = await storeResult(ledger, 'r1', big);
        const calls = [call({ status: 'completed', result: ref }), call({ call: 2, status: 'completed', result: '{"small":1}' })];
        const resolved = await resolveResults(ledger, calls);
        expect(resolved.map((c) => c.result)).toEqual([big, '{"small":1}']);
      });
    });
  });
}

// ── fixtures ──────────────────────────────────────────────────────────────────────────────

const t0 = new Date('2026-11-29T02:00:00Z');
const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);

function run(runId: string, overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    kind: 'run',
    runId,
    agent: 'refund-reconciler',
    input: { date: '2026-11-28' },
    prompt: 'Reconcile',
    model: 'savepoint-sim-1',
    config: RunConfig.parse({}),
    fingerprint: 'f',
    priceTableVersion: 'v',
    status: 'running',
    executionArn: 'arn:1',
    executions: ['arn:1'],
    createdAt: t0.toISOString(),
    updatedAt: t0.toISOString(),
    // StartRun creates the map: the DynamoDB ledger's applyBudgetExtension sets a path inside it.
    budgetExtensions: {},
    ...ZERO_COUNTERS,
    ...overrides,
  };
}

function turn(number: number, text = 'Looking at the refunds.', runId = 'r1'): TurnRecord {
  return {
    kind: 'turn',
    runId,
    turn: number,
    model: 'savepoint-sim-1',
    content: [{ type: 'text', text }],
    stopReason: 'end_turn',
    usage: { input_tokens: 100, output_tokens: 20 },
    costMicros: 420,
    latencyMs: 3,
    recordedAt: at(number).toISOString(),
  };
}

function call(overrides: Partial<ToolCallRecord> = {}): ToolCallRecord {
  return {
    kind: 'tool',
    runId: 'r1',
    turn: 3,
    call: 1,
    toolCallId: 'toolu_003_1',
    name: 'issue_refund',
    args: { amountCents: 100, note: { nested: ['a', 'b'] } },
    effect: 'write',
    idempotencyKey: 'r1:3:toolu_003_1',
    status: 'in_flight',
    leaseUntil: at(30).toISOString(),
    attempts: 0,
    ...overrides,
  };
}

function approval(overrides: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    kind: 'approval',
    approvalId: 'apv_0123456789abcdef',
    runId: 'r1',
    turn: 3,
    call: 1,
    toolName: 'issue_refund',
    summary: 'issue_refund $725.00',
    amount: { minor: 72_500, currency: 'usd' },
    status: 'pending',
    decideBy: at(60).toISOString(),
    createdAt: t0.toISOString(),
    ...overrides,
  };
}

function budgetApproval(extension: number): ApprovalRecord {
  return approval({
    approvalId: `apv_budget_steps_${extension}`,
    turn: 0,
    call: 0,
    toolName: 'extend_budget',
    summary: `steps budget +50% (extension ${extension})`,
    budget: { guard: 'steps', extension, limit: 600 },
  });
}

function recovery(key: string, reason = 'failed'): RecoveryRecord {
  return { attempts: 1, withoutProgress: 0, atSteps: 4, key, reason, executionName: `recover-${key}`, at: at(50).toISOString() };
}

function kill(by: string) {
  return { by, at: at(7).toISOString(), reason: `${by} pressed stop` };
}

function guardEvent(reason: string, second: number): GuardEvent {
  return { guard: 'steps', action: 'warned', reason, at: at(second).toISOString() };
}

function breaker(name: string, version: number, state: BreakerState['state'] = 'closed'): BreakerState {
  return { name, state, failures: [], trips: 0, version, ...(state === 'open' && { openedAt: at(1).toISOString() }) };
}
