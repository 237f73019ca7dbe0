import { historyAtStart } from '../../lambdas/guards/history.js';
import { beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import type { RunRecord } from '../../lambdas/records/ledger-records.js';
import { ErrorNames } from '../../lambdas/shared/errors.js';
import { createBudgetCheck } from '../../lambdas/steps/budget-check.js';
import { createCallModel } from '../../lambdas/steps/call-model.js';
import { createCallTool } from '../../lambdas/steps/call-tool.js';
import { createFinalize } from '../../lambdas/steps/finalize.js';
import { createStartRun } from '../../lambdas/steps/start-run.js';
import { RECOVERY, recoveryVerdict } from '../../lambdas/steps/recover-run.js';
import { checkVersion, codeFingerprint, migrationVerdict } from '../../lambdas/runs/versions.js';
import { defineAgent } from '../../lambdas/define.js';
import { versionedAgent } from '../versions/versioned-agent.js';

const v1 = versionedAgent({ version: '1', payments: [] });
const v2 = versionedAgent({ version: '2', payments: [] });
const v3 = versionedAgent({ version: '3', compatibleWith: ['1'], payments: [] });
const fp = (agent: typeof v1, codeVersion = 'dev') => codeFingerprint(agent, codeVersion)(agent.model);
/** What the state machine passes StartRun about its definition. */
const definition = { hash: 'a1b2c3d4e5f60718' };
const clock = { now: () => new Date('2026-11-30T10:00:00Z') };

describe('the per-step version check', () => {
  const run = { runId: 'r', model: v1.model, fingerprint: fp(v1), agentVersion: '1' } as RunRecord;

  it('passes the code the run is bound to, and returns its fingerprint', () => {
    expect(checkVersion(run, v1, codeFingerprint(v1, 'dev'))).toBe(fp(v1));
  });

  it.each([
    ['another version of the agent', v2, 'dev', `run r started on version 1 (${fp(v1)}), this code is version 2 (${fp(v2)})`],
    ['the same version built from other code', v1, 'build-2', `run r started on version 1 (${fp(v1)}), this code is version 1 (${fp(v1, 'build-2')})`],
  ])('refuses %s with Agent.VersionMismatch, naming both and the way out', (_case, agent, codeVersion, names) => {
    const refusal = (() => {
      try {
        checkVersion(run, agent, codeFingerprint(agent, codeVersion));
      } catch (error) {
        return error as Error;
      }
    })();
    expect(refusal?.name).toBe(ErrorNames.VersionMismatch);
    expect(refusal?.message).toBe(`${names}; finish it on its version or migrate it (savepoint migrate r --to <version>)`);
  });

  it('is a deliberate failure: a run it failed is not recovered (a new execution would meet the same code)', () => {
    const failed = { ...run, status: 'failed', executionArn: 'arn:e1', error: { error: ErrorNames.VersionMismatch, cause: '…' }, steps: 3 } as RunRecord;
    expect(recoveryVerdict(failed, { runId: 'r', executionArn: 'arn:e1', status: 'FAILED', endedAt: '2026-11-30T10:00:00.000Z' }, RECOVERY, clock.now())).toMatchObject({ action: 'ignore' });
  });

  it('fingerprints a run on its own model: the same code on another model is other code', () => {
    const fingerprints = codeFingerprint(v1, 'dev');
    expect(fingerprints('sim:savepoint-sim-2')).not.toBe(fingerprints(v1.model));
    expect(fingerprints(v1.model)).toBe(fingerprints(v1.model));
  });
});

describe('the migration verdict', () => {
  type Subject = Parameters<typeof migrationVerdict>[0];
  const run: Subject = { runId: 'r', status: 'running', agent: 'versioned', agentVersion: '1', fingerprint: fp(v1) };
  it.each([
    ['allows a version that declares the run’s compatible', run, v3, '3', { allowed: true }],
    ['refuses a version that declares nothing', run, v2, '2', 'version 2 does not declare version 1 compatible (it declares no compatibleWith); the run finishes on version 1'],
    ['refuses a version that declares others', run, versionedAgent({ version: '4', compatibleWith: ['2', '3'], payments: [] }), '4', 'version 4 does not declare version 1 compatible (it declares compatibleWith [2, 3])'],
    ['refuses when the deployed code is another version than asked for', run, v3, '2', 'the deployed code is version 3'],
    ['refuses a run that is not live', { ...run, status: 'succeeded' as const }, v3, '3', 'it is succeeded; only a live run is migrated'],
    ['refuses a run already on this code', { ...run, fingerprint: fp(v3) }, v3, '3', `it runs on this code already (${fp(v3)})`],
    ['refuses other code under the same version number', { ...run, agentVersion: '3' }, v3, '3', 'it started on other code under the same version 3'],
    ['refuses a run of an agent without versions', { ...run, agentVersion: undefined }, v3, '3', 'it started on an agent that declares no version'],
    ['refuses a run of another agent', { ...run, agent: 'other' }, v3, '3', 'it is a run of agent other, not versioned'],
  ])('%s', (_case, subject: Subject, agent, to, expected) => {
    const verdict = migrationVerdict(subject, agent, fp(agent), to);
    if (typeof expected !== 'string') return expect(verdict).toEqual(expected);
    expect(verdict.allowed).toBe(false);
    expect(!verdict.allowed && verdict.reason).toContain(`run r cannot be migrated to version ${to}: ${expected}`);
  });

  it('defineAgent refuses compatibleWith without a version, or naming itself', () => {
    const base = { ...v1, version: undefined, compatibleWith: ['1'] };
    expect(() => defineAgent(base)).toThrow('defineAgent versioned: compatibleWith needs a version of its own (set `version`)');
    expect(() => defineAgent({ ...v1, version: '2', compatibleWith: ['2'] })).toThrow('compatibleWith: "2" must name an earlier version, not "2" itself');
  });
});

describe('steps on a run bound to other code', () => {
  let ledger: EmbeddedLedger;
  const stopped: string[] = [];
  const startRun = (agent: typeof v1) => {
    const step = createStartRun({ agent, ledger, clock, codeVersion: 'dev', executions: { isRunning: async () => true, stop: async (arn) => void stopped.push(arn) } });
    return (input: { event: unknown; executionArn: string }) => step({ ...input, definition });
  };

  beforeEach(async () => {
    ledger = EmbeddedLedger.open();
    stopped.length = 0;
    await startRun(v1)({ event: { runId: 'r', input: { id: 'o1' } }, executionArn: 'arn:aws:states:us-east-1:1:execution:m:e1' });
  });

  it('BudgetCheck, CallModel and CallTool of v2 refuse the v1 run before anything is called', async () => {
    const deps = { agent: v2, fingerprint: codeFingerprint(v2, 'dev'), ledger, clock };
    // No model, breaker or tool client: the check comes before any of them is touched.
    const unused = undefined as never;
    await expect(createBudgetCheck(deps)({ runId: 'r' })).rejects.toMatchObject({ name: ErrorNames.VersionMismatch });
    await expect(createCallModel({ ...deps, models: unused, breaker: unused })({ runId: 'r', turn: 1 })).rejects.toMatchObject({ name: ErrorNames.VersionMismatch });
    await expect(createCallTool({ ...deps, agentDeps: unused, breaker: unused, leaseMs: 1000 })({ runId: 'r', turn: 1, call: 1 })).rejects.toMatchObject({ name: ErrorNames.VersionMismatch });
    expect(await ledger.listConversation('r')).toMatchObject({ turns: [], calls: [], approvals: [] });
  });

  it('BudgetCheck of the run’s own code goes on', async () => {
    expect(await createBudgetCheck({ agent: v1, fingerprint: codeFingerprint(v1, 'dev'), ledger, clock })({ runId: 'r' })).toMatchObject({ continue: true, nextTurn: 1 });
  });

  it('StartRun of an incompatible version refuses the migration and writes nothing', async () => {
    const before = await ledger.getRun('r');
    await expect(startRun(v2)({ event: { runId: 'r', input: { id: 'o1' }, migrate: { to: '2', by: 'ops' } }, executionArn: 'arn:aws:states:us-east-1:1:execution:m:e2' })).rejects.toMatchObject({
      name: ErrorNames.InvalidInput,
      message: expect.stringContaining('migrate: run r cannot be migrated to version 2: version 2 does not declare version 1 compatible'),
    });
    expect(await ledger.getRun('r')).toEqual(before);
    expect(stopped).toEqual([]);
  });

  it('StartRun of a compatible version takes the run over, records the migration and stops the superseded execution', async () => {
    const e2 = 'arn:aws:states:us-east-1:1:execution:m:e2';
    expect(await startRun(v3)({ event: { runId: 'r', input: { id: 'o1' }, migrate: { to: '3', by: 'ops' } }, executionArn: e2 })).toEqual({ runId: 'r', action: 'resume', status: 'running', history: historyAtStart(0) });
    expect(await ledger.getRun('r')).toMatchObject({
      executionArn: e2,
      fingerprint: fp(v3),
      agentVersion: '3',
      migrations: [{ by: 'ops', at: '2026-11-30T10:00:00.000Z', from: { version: '1', fingerprint: fp(v1), executionArn: 'arn:aws:states:us-east-1:1:execution:m:e1' }, to: { version: '3', fingerprint: fp(v3), executionArn: e2 } }],
    });
    expect(stopped).toEqual(['arn:aws:states:us-east-1:1:execution:m:e1']);
    // A retried StartRun (its first attempt died after the write) stops the superseded execution again, and migrates nothing more.
    expect(await startRun(v3)({ event: { runId: 'r', input: { id: 'o1' }, migrate: { to: '3', by: 'ops' } }, executionArn: e2 })).toMatchObject({ action: 'resume' });
    expect(stopped).toEqual(['arn:aws:states:us-east-1:1:execution:m:e1', 'arn:aws:states:us-east-1:1:execution:m:e1']);
    expect((await ledger.getRun('r'))!.migrations).toHaveLength(1);
    // The superseded execution's own failure (its next step refused) is not the run's.
    const finalize = createFinalize({ ledger, clock });
    await finalize({ runId: 'r', executionArn: 'arn:aws:states:us-east-1:1:execution:m:e1', failure: { Error: ErrorNames.VersionMismatch, Cause: 'superseded' } });
    expect((await ledger.getRun('r'))!.status).toBe('running');
    // The driving execution's failure is.
    await finalize({ runId: 'r', executionArn: e2, failure: { Error: ErrorNames.Terminal, Cause: 'boom' } });
    expect((await ledger.getRun('r'))!.status).toBe('failed');
  });
});
