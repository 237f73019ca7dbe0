import { describe, expect, it } from 'vitest';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import type { ApprovalRecord, RunRecord } from '../../lambdas/records/ledger-records.js';
import { createSweep, type ExecutionDescription } from '../../lambdas/steps/sweep.js';
import type { DamagedRunOptions } from '../../lambdas/ledger/ledger.js';
import { LedgerIntegrityError } from '../../lambdas/shared/errors.js';
import { runRecord } from '../support/records.js';
import { aliasStarter } from '../../lambdas/adapters/control-plane-handlers.js';

const ARN = (name: string) => `arn:aws:states:us-east-1:1:execution:Savepoint-refund-reconciler:${name}`;
const now = new Date('2026-11-30T03:00:00.000Z');

const run = (runId: string, overrides: Partial<RunRecord> = {}): RunRecord =>
  runRecord({
    runId,
    agent: 'refund-reconciler',
    input: { date: '2026-11-29' },
    model: 'savepoint-sim-1',
    executionArn: ARN(runId),
    executions: [ARN(runId)],
    createdAt: '2026-11-30T02:00:00.000Z',
    updatedAt: '2026-11-30T02:30:00.000Z',
    steps: 12,
    ...overrides,
  });

const approval = (runId: string, createdAt: string): ApprovalRecord => ({
  kind: 'approval',
  approvalId: `apv_${runId.padEnd(12, 'x')}`,
  runId,
  agent: 'refund-reconciler',
  turn: 1,
  call: 1,
  toolName: 'issue_refund',
  summary: 'refund',
  status: 'pending',
  decideBy: '2026-12-01T00:00:00.000Z',
  createdAt,
});

/** A world: the ledger holds `runs`, Step Functions knows `executions`; the starter records what it started. */
async function world(runs: RunRecord[], executions: Record<string, ExecutionDescription>, approvals: ApprovalRecord[] = []) {
  const ledger = EmbeddedLedger.open();
  for (const record of runs) await ledger.createRun(record);
  for (const record of approvals) await ledger.upsertApproval(record, 'token');
  const started: string[] = [];
  const sweep = createSweep({
    agent: { name: 'refund-reconciler' },
    ledger,
    executions: { describe: async (arn) => executions[arn] },
    starter: {
      start: async (name) => {
        started.push(name);
        return { executionArn: ARN(name) };
      },
    },
    clock: { now: () => now },
  });
  return { ledger, sweep, started };
}

describe('the sweeper', () => {
  it('resumes a run still marked running whose execution failed unnoticed, through the recovery verdict', async () => {
    const { sweep, started, ledger } = await world([run('r1')], { [ARN('r1')]: { status: 'FAILED', stopDate: '2026-11-30T02:31:00.000Z', error: 'Agent.Transient' } });
    const result = await sweep();
    expect(result.recovered).toEqual([{ runId: 'r1', executionArn: ARN('r1-recovery-1'), reason: 'execution r1 FAILED: Agent.Transient' }]);
    expect(started).toEqual(['r1-recovery-1']);
    expect((await ledger.getRun('r1'))!.recovery).toMatchObject({ attempts: 1, key: `${ARN('r1')}@2026-11-30T02:31:00.000Z` });
  });

  it('builds the same recovery key as the event-driven recovery, so a second sweep starts the same execution, not another', async () => {
    const { sweep, started } = await world([run('r1')], { [ARN('r1')]: { status: 'TIMED_OUT', stopDate: '2026-11-30T02:31:00.000Z' } });
    await sweep();
    await sweep();
    expect(started).toEqual(['r1-recovery-1', 'r1-recovery-1']);
  });

  it('resumes a run whose execution no longer exists (history expired) as lost', async () => {
    const { sweep } = await world([run('r1')], {});
    expect((await sweep()).recovered).toEqual([expect.objectContaining({ runId: 'r1', reason: expect.stringMatching(/LOST: ExecutionDoesNotExist/) })]);
  });

  it('leaves running executions alone, and leaves just-ended ones to the event-driven recovery', async () => {
    const { sweep, started } = await world([run('r1'), run('r2')], {
      [ARN('r1')]: { status: 'RUNNING' },
      [ARN('r2')]: { status: 'FAILED', stopDate: '2026-11-30T02:58:00.000Z' },
    });
    const result = await sweep();
    expect(result).toMatchObject({ checked: 2, recovered: [], reported: [], failed: [] });
    expect(started).toEqual([]);
  });

  it('looks only at running runs of its own agent', async () => {
    const { sweep, started } = await world(
      [run('done', { status: 'succeeded' }), run('other', { agent: 'support-triage' })],
      { [ARN('done')]: { status: 'FAILED', stopDate: '2026-11-30T02:31:00.000Z' }, [ARN('other')]: { status: 'FAILED', stopDate: '2026-11-30T02:31:00.000Z' } },
    );
    expect((await sweep()).checked).toBe(0);
    expect(started).toEqual([]);
  });

  it('reports what recovery does not answer: a stopped execution whose kill was not recorded, a succeeded one', async () => {
    const { sweep, started } = await world([run('killed'), run('odd')], {
      [ARN('killed')]: { status: 'ABORTED', stopDate: '2026-11-30T02:31:00.000Z' },
      [ARN('odd')]: { status: 'SUCCEEDED', stopDate: '2026-11-30T02:31:00.000Z' },
    });
    const { reported } = await sweep();
    // Runs of one instant, newest first by run id as every list of runs (records/run-order.ts).
    expect(reported).toEqual([
      { runId: 'odd', reason: expect.stringMatching(/succeeded but the run is still marked running/) },
      { runId: 'killed', reason: expect.stringMatching(/was stopped but the run is still marked running.*savepoint kill killed/) },
    ]);
    expect(started).toEqual([]);
  });

  it('gives a run up past the recovery bound (the same bound as the event-driven recovery)', async () => {
    const stuck = run('r1', { recovery: { attempts: 3, withoutProgress: 3, atSteps: 12, key: 'earlier', reason: 'x', executionName: 'r1-recovery-3', at: '2026-11-30T02:20:00.000Z' } });
    const { sweep, ledger } = await world([stuck], { [ARN('r1')]: { status: 'FAILED', stopDate: '2026-11-30T02:31:00.000Z' } });
    expect((await sweep()).gaveUp).toEqual([{ runId: 'r1', reason: expect.stringMatching(/^not recovered: 3 recoveries in a row made no progress/) }]);
    expect((await ledger.getRun('r1'))!.status).toBe('failed');
  });

  it('goes on past a run it cannot sweep and names it', async () => {
    const ledger = EmbeddedLedger.open();
    await ledger.createRun(run('bad'));
    await ledger.createRun(run('good'));
    const sweep = createSweep({
      agent: { name: 'refund-reconciler' },
      ledger,
      executions: {
        describe: async (arn) => {
          if (arn === ARN('bad')) throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
          return { status: 'FAILED', stopDate: '2026-11-30T02:31:00.000Z' };
        },
      },
      starter: { start: async (name) => ({ executionArn: ARN(name) }) },
      clock: { now: () => now },
    });
    const result = await sweep();
    expect(result.failed).toEqual([{ runId: 'bad', error: 'ThrottlingException: Rate exceeded' }]);
    expect(result.recovered.map((r) => r.runId)).toEqual(['good']);
  });

  it('names a run whose record fails verification as needing a person, and sweeps the others', async () => {
    const ledger = EmbeddedLedger.open();
    await ledger.createRun(run('good'));
    // What the DynamoDB ledger reports of a run record altered behind its back (the contract suite
    // shows it on dynalite): the run is named to onDamaged and left out of the list.
    const sweep = createSweep({
      agent: { name: 'refund-reconciler' },
      ledger: {
        listRunningRuns: async (options?: DamagedRunOptions) => {
          options?.onDamaged?.('altered', new LedgerIntegrityError({ runId: 'altered', record: 'RUN' }, 'its seal does not match its content and key'));
          return ledger.listRunningRuns();
        },
        getRun: (runId) => ledger.getRun(runId),
        recordRecovery: (...args) => ledger.recordRecovery(...args),
        finishRun: ledger.finishRun.bind(ledger),
        listConversation: (...args) => ledger.listConversation(...args),
        returnFleetLease: (...args) => ledger.returnFleetLease(...args),
        listPendingApprovals: () => ledger.listPendingApprovals(),
      },
      executions: { describe: async () => ({ status: 'FAILED', stopDate: '2026-11-30T02:31:00.000Z' }) },
      starter: { start: async (name) => ({ executionArn: ARN(name) }) },
      clock: { now: () => now },
    });
    const result = await sweep();
    expect(result.failed).toEqual([{ runId: 'altered', error: 'Ledger.IntegrityError: ledger integrity: run altered, record RUN fails verification: its seal does not match its content and key' }]);
    expect(result.recovered.map((recovered) => recovered.runId)).toEqual(['good']);
    expect(result.summary).toContain('altered');
  });

  it('counts the approvals waiting, the age of the oldest, and reports those whose execution is gone', async () => {
    const { sweep } = await world(
      [run('live'), run('dead'), run('over', { status: 'succeeded' })],
      { [ARN('live')]: { status: 'RUNNING' }, [ARN('dead')]: { status: 'FAILED', stopDate: '2026-11-30T02:59:00.000Z' } },
      [approval('live', '2026-11-30T01:00:00.000Z'), approval('dead', '2026-11-30T02:00:00.000Z'), approval('over', '2026-11-30T02:30:00.000Z')],
    );
    const result = await sweep();
    expect(result.approvalsWaiting).toBe(3);
    expect(result.oldestApprovalAgeSeconds).toBe(2 * 3600);
    expect(result.orphanedApprovals.map(({ runId, reason }) => ({ runId, reason }))).toEqual([
      { runId: 'dead', reason: 'execution dead is FAILED' },
      { runId: 'over', reason: 'its run is succeeded' },
    ]);
  });
});

/**
 * The stack's shared sweeper (infra/control-plane.ts, lambdas/adapters/control-plane-handlers.ts)
 * names no agent: it sweeps every agent's runs of the ledger and resumes each on its own
 * execution's state machine (its version, else that machine's `live` alias), never another's.
 */
describe("the stack's sweeper, shared by its agents", () => {
  const OTHER = (name: string) => `arn:aws:states:us-east-1:1:execution:Savepoint-support-triage:${name}`;

  it('resumes the runs of every agent, each on a state machine of its own execution', async () => {
    const ledger = EmbeddedLedger.open();
    await ledger.createRun(run('r1'));
    await ledger.createRun(run('t1', { agent: 'support-triage', executionArn: OTHER('t1'), executions: [OTHER('t1')] }));
    const failed = { status: 'FAILED', stopDate: '2026-11-30T02:31:00.000Z', error: 'Agent.Transient' } as const;
    const startedOn: string[] = [];
    const sweep = createSweep({
      ledger,
      executions: { describe: async (arn) => ({ [ARN('r1')]: failed, [OTHER('t1')]: failed })[arn] },
      starter: aliasStarter((stateMachineArn) => ({
        start: async (name) => {
          startedOn.push(`${stateMachineArn} ${name}`);
          return { executionArn: `${stateMachineArn}:${name}` };
        },
      })),
      clock: { now: () => now },
    });
    const result = await sweep();
    expect(result.recovered.map((recovered) => recovered.runId).sort()).toEqual(['r1', 't1']);
    expect(startedOn.sort()).toEqual([
      'arn:aws:states:us-east-1:1:stateMachine:Savepoint-refund-reconciler:live r1-recovery-1',
      'arn:aws:states:us-east-1:1:stateMachine:Savepoint-support-triage:live t1-recovery-1',
    ]);
  });

  it('starts nothing that is not the continuation of an execution', async () => {
    const starter = aliasStarter(() => ({ start: async () => ({ executionArn: 'never' }) }));
    expect(() => starter.start('x', '{}')).toThrow(/starts only continuations of an execution/);
  });
});
