import { readFileSync } from 'node:fs';
import { beforeEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../lambdas/records/ledger-records.js';
import { CrashPoint } from '../../local/runtime/crash.js';
import { createRecoverOnStatusChange, recoveryExecutionName, recoveryVerdict, type EndedExecution } from '../../lambdas/steps/recover-run.js';
import { CrashAt, crashInjector } from '../../local/runtime/crash.js';
import { runRecord } from '../support/records.js';

const run: RunRecord = runRecord({
  runId: 'r1',
  agent: 'refund-reconciler',
  input: { date: '2026-11-28' },
  model: 'savepoint-sim-1',
  executionArn: 'arn:aws:states:us-east-1:1:execution:agent:e1',
  steps: 40,
});
const ended: EndedExecution = { runId: 'r1', executionArn: run.executionArn, status: 'FAILED', endedAt: '2026-11-29T02:10:00.000Z', error: 'Agent.Transient' };
const policy = { maxWithoutProgress: 3 };
const now = new Date('2026-11-29T02:10:01.000Z');

describe('the recovery verdict', () => {
  it('recovers a running run whose execution failed, with a named new execution', () => {
    expect(recoveryVerdict(run, ended, policy, now)).toEqual({
      action: 'recover',
      recorded: false,
      recovery: {
        attempts: 1,
        withoutProgress: 1,
        atSteps: 40,
        key: `${run.executionArn}@2026-11-29T02:10:00.000Z`,
        reason: 'execution e1 FAILED: Agent.Transient',
        executionName: 'r1-recovery-1',
        at: now.toISOString(),
      },
    });
  });

  it.each([
    ['an aborted execution: StopExecution is a kill', { ...run }, { ...ended, status: 'ABORTED' as const }, /stopped on purpose/],
    ['an execution that no longer drives the run', { ...run, executionArn: 'arn:e2' }, ended, /another execution drives the run \(arn:e2\)/],
    ['a run that finished', { ...run, status: 'succeeded' as const }, ended, /the run is succeeded/],
    ['a run that was killed', { ...run, status: 'killed' as const }, ended, /the run is killed/],
    ['a run that failed on purpose (invalid input)', { ...run, status: 'failed' as const, error: { error: 'Agent.InvalidInput', cause: 'x' } }, ended, /the run is failed \(Agent.InvalidInput\)/],
    ['a run already given up', { ...run, status: 'failed' as const, error: { error: 'Agent.Unrecoverable', cause: 'x' } }, ended, /Agent.Unrecoverable/],
  ])('ignores %s', (_case, record, ending, reason) => {
    const verdict = recoveryVerdict(record, ending, policy, now);
    expect(verdict.action).toBe('ignore');
    expect(verdict.action === 'ignore' && verdict.reason).toMatch(reason);
  });

  it('recovers a run that failed by accident (retries exhausted on a transient fault)', () => {
    const failed = { ...run, status: 'failed' as const, error: { error: 'Agent.Transient', cause: 'model provider answered 503' } };
    expect(recoveryVerdict(failed, ended, policy, now)).toMatchObject({ action: 'recover', recovery: { attempts: 1 } });
  });

  it('does not recover a child run that failed by accident once its spend was settled into its parent (its resume would be refused)', () => {
    const failed = { ...run, status: 'failed' as const, error: { error: 'Agent.Transient', cause: 'x' }, parent: { runId: 'p1', turn: 1, call: 1 } };
    expect(recoveryVerdict(failed, ended, policy, now)).toMatchObject({ action: 'recover' });
    expect(recoveryVerdict({ ...failed, settledIntoParentAt: now.toISOString() }, ended, policy, now)).toEqual({ action: 'ignore', reason: 'the run is a child run whose spend was settled into its parent p1 when it ended' });
  });

  it('answers a second delivery of the same ending with the recovery it recorded (started again, idempotently)', () => {
    const first = recoveryVerdict(run, ended, policy, now);
    if (first.action !== 'recover') throw new Error('expected a recovery');
    expect(recoveryVerdict({ ...run, recovery: first.recovery }, ended, policy, now)).toEqual({ action: 'recover', recovery: first.recovery, recorded: true });
  });

  it('counts recoveries without progress, resets the count when the run moved on, and gives up past the bound', () => {
    const after = (record: RunRecord, endedAt: string) => {
      const verdict = recoveryVerdict(record, { ...ended, endedAt }, policy, now);
      if (verdict.action !== 'recover') return { record, verdict };
      return { record: { ...record, recovery: verdict.recovery }, verdict };
    };
    let state = after(run, 't1');
    state = after(state.record, 't2');
    expect(state.verdict).toMatchObject({ recovery: { attempts: 2, withoutProgress: 2 } });
    state = after({ ...state.record, steps: 41 }, 't3');
    expect(state.verdict).toMatchObject({ recovery: { attempts: 3, withoutProgress: 1, atSteps: 41 } });
    state = after(state.record, 't4');
    state = after(state.record, 't5');
    expect(state.verdict).toMatchObject({ recovery: { attempts: 5, withoutProgress: 3 } });
    state = after(state.record, 't6');
    expect(state.verdict).toEqual({
      action: 'give-up',
      reason: 'not recovered: 3 recoveries in a row made no progress (stuck at step 41); last: execution e1 FAILED: Agent.Transient',
    });
  });

  it('does not count a recovery of a run lost while it waited for a person among those without progress', () => {
    const waiting = { ...ended, status: 'LOST' as const, waitingForPerson: true };
    let record: RunRecord = run;
    for (let delivery = 1; delivery <= policy.maxWithoutProgress + 3; delivery++) {
      const verdict = recoveryVerdict(record, { ...waiting, endedAt: `t${delivery}` }, policy, now);
      expect(verdict).toMatchObject({ action: 'recover', recovery: { attempts: delivery, withoutProgress: 0 } });
      if (verdict.action === 'recover') record = { ...record, recovery: verdict.recovery };
    }
    // Lost again while not waiting: counted from where it was, as before.
    expect(recoveryVerdict(record, { ...ended, endedAt: 'later' }, policy, now)).toMatchObject({ action: 'recover', recovery: { withoutProgress: 1 } });
  });

  it('names recovery executions within the 80 characters Step Functions allows, distinct per run', () => {
    const long = 'x'.repeat(80);
    const name = recoveryExecutionName(long, 12);
    expect(name.length).toBeLessThanOrEqual(80);
    expect(name).toMatch(/-recovery-12$/);
    expect(recoveryExecutionName(`${'x'.repeat(79)}y`, 12)).not.toBe(name);
  });
});

describe('crash injection', () => {
  const died: string[] = [];
  const die = (point: string, tools: readonly string[]): never => {
    died.push(`${point}:${tools.join(',')}`);
    throw new Error('died');
  };

  it('parses <point>[:<tool>][:<nth>] and names what is wrong', () => {
    expect(CrashAt.parse('after-commit')).toEqual({ point: 'after-commit', tool: undefined, nth: 1 });
    expect(CrashAt.parse('after-commit:issue_refund:2')).toEqual({ point: 'after-commit', tool: 'issue_refund', nth: 2 });
    expect(CrashAt.parse('model-call:3')).toEqual({ point: 'model-call', tool: undefined, nth: 3 });
    expect(CrashAt.safeParse('after-lunch').error?.issues[0]?.message).toMatch(/unknown crash point "after-lunch"; expected one of before-claim, /);
    expect(CrashAt.safeParse('after-commit:a:b:1').success).toBe(false);
  });

  it('ends the process the nth time the point is reached for the tool, and never otherwise', () => {
    died.length = 0;
    const crash = crashInjector({ at: CrashAt.parse('after-commit:issue_refund:2') }, die);
    crash.reached(CrashPoint.AfterCommit, ['get_order']);
    crash.reached(CrashPoint.AfterCommit, ['issue_refund']);
    crash.reached(CrashPoint.AfterRecord, ['issue_refund']);
    expect(died).toEqual([]);
    expect(() => crash.reached(CrashPoint.AfterCommit, ['issue_refund'])).toThrow('died');
    expect(died).toEqual(['after-commit:issue_refund']);
  });

  it('crashes at random boundaries at the given rate, the same ones for the same seed', () => {
    const crashesOf = (seed: number) => {
      const hits: number[] = [];
      const crash = crashInjector({ rate: 0.1, seed }, () => {
        throw new Error('died');
      });
      for (let index = 0; index < 2_000; index++) {
        try {
          crash.reached(CrashPoint.BeforeClaim, []);
        } catch {
          hits.push(index);
        }
      }
      return hits;
    };
    expect(crashesOf(5)).toEqual(crashesOf(5));
    expect(crashesOf(5)).not.toEqual(crashesOf(6));
    expect(crashesOf(5).length).toBeGreaterThan(150);
    expect(crashesOf(5).length).toBeLessThan(250);
  });
});

describe('the recovery handler', () => {
  const event = JSON.parse(readFileSync(new URL('../../events/execution-failed.json', import.meta.url), 'utf8')) as { detail: Record<string, unknown> };
  const asked: string[] = [];
  // The schedule's execution names no run in its input: StartRun noted it under the execution.
  const noted = new Map([[event.detail['executionArn'] as string, 'refunds-2026-11-28']]);
  const handler = createRecoverOnStatusChange({
    // Only what the handler reads before it decides: the run record (here: none), and which run an execution drives.
    ledger: { getRun: async (runId: string) => (asked.push(runId), undefined), runOfExecution: async (arn: string) => noted.get(arn) } as never,
    starter: { start: () => Promise.reject(new Error('must not start')) },
    clock: { now: () => now },
  });
  // What each test's handler asked for, that test's alone.
  beforeEach(() => {
    asked.length = 0;
  });

  it('finds the run of an execution whose input does not name it where StartRun noted it, with no agent code (events/execution-failed.json)', async () => {
    expect(await handler(event)).toEqual({ runId: 'refunds-2026-11-28', action: 'ignored', reason: 'no such run (it never started)' });
    expect(asked).toEqual(['refunds-2026-11-28']);
  });

  it('takes the run id an input names, without a lookup', async () => {
    const input = JSON.stringify({ runId: 'named-run', input: { day: '2026-11-28' } });
    expect(await handler({ ...event, detail: { ...event.detail, executionArn: `${event.detail['executionArn'] as string}-2`, input } })).toMatchObject({ runId: 'named-run' });
    expect(asked).toEqual(['named-run']);
  });

  it('ignores executions that did not fail, and executions that drive no run', async () => {
    expect(await handler({ ...event, detail: { ...event.detail, status: 'SUCCEEDED' } })).toMatchObject({ action: 'ignored', reason: 'execution SUCCEEDED' });
    expect(await handler({ ...event, detail: { ...event.detail, executionArn: 'arn:aws:states:us-east-1:123456789012:execution:Savepoint-agent:other', input: '{"hello":"world"}' } })).toMatchObject({
      action: 'ignored',
      reason: 'the execution drives no run (its input names none, and StartRun noted none)',
    });
  });

  it('decides again from a fresh read when its recovery finds the run changed, and fails the invocation (for Lambda to retry) after three', async () => {
    const input = JSON.stringify({ runId: 'r1', input: run.input });
    const failed = { ...event, detail: { ...event.detail, executionArn: run.executionArn, input } };
    let reads = 0;
    const started: string[] = [];
    // The run changes under every write: each conditional recordRecovery fails, as when another copy of the ending won each time.
    const changing = createRecoverOnStatusChange({
      ledger: { getRun: async () => (reads++, run), recordRecovery: async () => false, listConversation: async () => ({ turns: [], calls: [] }) } as never,
      starter: { start: async (name: string) => (started.push(name), { executionArn: `arn:${name}` }) },
      clock: { now: () => now },
    });
    await expect(changing(failed)).rejects.toMatchObject({ name: 'Agent.Transient', message: 'run r1 changed while recovering it, 3 times; try again' });
    expect(reads).toBe(3);
    expect(started).toEqual([]);

    // Another copy of the ending recorded the same recovery first: the second decision reads it and starts that recovery again, by its name.
    reads = 0;
    let written: RunRecord['recovery'];
    const settling = createRecoverOnStatusChange({
      ledger: {
        getRun: async () => (reads++, written ? { ...run, recovery: written } : run),
        recordRecovery: async (_runId: string, recovery: RunRecord['recovery']) => ((written = recovery), false),
        listConversation: async () => ({ turns: [], calls: [] }),
      } as never,
      starter: { start: async (name: string) => (started.push(name), { executionArn: `arn:${name}` }) },
      clock: { now: () => now },
    });
    expect(await settling(failed)).toMatchObject({ action: 'recovered', executionArn: 'arn:r1-recovery-1' });
    expect(reads).toBe(2);
    expect(started).toEqual(['r1-recovery-1']);
  });

  it('refuses an event of the wrong shape with a message naming the field, without retrying it', async () => {
    const error = await handler({ ...event, detail: { ...event.detail, executionArn: 42 } }).catch((caught: unknown) => caught as Error);
    expect(error).toMatchObject({ name: 'Agent.InvalidInput', message: expect.stringMatching(/^invalid execution status change: detail\.executionArn: /) });
  });
});
