import { describe, expect, it } from 'vitest';
import { at, run, turn, call, recovery, kill } from '../fixtures.js';
import { useLedger, type MakeLedger } from './support.js';

/** The runs role (`RunLedger`): creating, attaching, recovering, finishing and listing runs. */
export function runsSpec(make: MakeLedger, options: { sharedReads?: boolean } = {}): void {
  describe('runs', () => {
    const { ledger } = useLedger(make);

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
        // A ledger that shares its records keeps the one written, frozen, and hands it out so: a
        // change by its writer or by a reader throws.
        const changes = [() => (written.config.maxSteps = 1), () => written.executions.push('arn:mutated')];
        const read = (await ledger.getRun('r1'))!;
        changes.push(() => (read.config.maxSteps = 2));
        for (const change of changes) {
          if (options.sharedReads) expect(change).toThrow(TypeError);
          else change();
        }
        expect(await ledger.getRun('r1')).toEqual(run('r1'));
      });

      it('lists runs newest first, up to a limit', async () => {
        await ledger.createRun(run('old', { createdAt: at(0).toISOString() }));
        await ledger.createRun(run('new', { createdAt: at(20).toISOString() }));
        await ledger.createRun(run('mid', { createdAt: at(10).toISOString() }));
        expect((await ledger.listRuns()).map((listed) => listed.runId)).toEqual(['new', 'mid', 'old']);
        expect((await ledger.listRuns(2)).map((listed) => listed.runId)).toEqual(['new', 'mid']);
      });

      it('lists runs created in one millisecond by run id, descending as the runs API pages them, whichever limit cuts them and whether they run or ended', async () => {
        // Ids whose order by code units (`run-B` < `run-a`) is not the API's (localeCompare: `run-a` < `run-B`).
        const instant = at(5).toISOString();
        for (const runId of ['run-B', 'run-a', 'run-D', 'run-c']) await ledger.createRun(run(runId, { createdAt: instant }));
        await ledger.createRun(run('older', { createdAt: at(0).toISOString() }));
        const ids = (runs: { runId: string }[]) => runs.map((listed) => listed.runId);
        const agent = (await ledger.getRun('older'))!.agent;
        const order = ['run-D', 'run-c', 'run-B', 'run-a', 'older'];
        expect(ids(await ledger.listRuns())).toEqual(order);
        expect(ids(await ledger.listRunningRuns())).toEqual(order);
        expect(ids(await ledger.listRunsOf(agent))).toEqual(order);
        for (const limit of [1, 2, 3]) {
          expect(ids(await ledger.listRuns(limit)), `listRuns(${limit})`).toEqual(order.slice(0, limit));
          expect(ids(await ledger.listRunsOf(agent, limit)), `listRunsOf(${limit})`).toEqual(order.slice(0, limit));
        }
        expect(ids(await ledger.listRunsOf(agent, 2, { notAfter: instant }))).toEqual(['run-D', 'run-c']);
        // Ended one after the other in neither order (and let go of from memory, by a ledger that does).
        for (const runId of ['run-B', 'run-D', 'run-c', 'run-a']) await ledger.finishRun(runId, { status: 'succeeded' }, at(10));
        for (const limit of [1, 2, 3, 5]) expect(ids(await ledger.listRuns(limit)), `listRuns(${limit}) once ended`).toEqual(order.slice(0, limit));
        expect(ids(await ledger.listRunningRuns())).toEqual(['older']);
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

    describe('listRunsOf', () => {
      it("lists one agent's runs newest first, finished or not, as written; none of another agent's", async () => {
        await ledger.createRun(run('r1'));
        await ledger.createRun(run('r2', { createdAt: at(5).toISOString() }));
        await ledger.createRun(run('other', { agent: 'another-agent', createdAt: at(7).toISOString() }));
        await ledger.createRun(run('r3', { createdAt: at(9).toISOString() }));
        await ledger.finishRun('r2', { status: 'succeeded' }, at(10));
        const agent = (await ledger.getRun('r1'))!.agent;
        expect((await ledger.listRunsOf(agent)).map((r) => r.runId)).toEqual(['r3', 'r2', 'r1']);
        expect((await ledger.listRunsOf('another-agent')).map((r) => r.runId)).toEqual(['other']);
        // The records read back as written: no index attribute shows.
        expect(await ledger.listRunsOf(agent, 1)).toEqual([await ledger.getRun('r3')]);
      });

      it('lists from a creation time down (the runs API pages with it)', async () => {
        await ledger.createRun(run('r1'));
        await ledger.createRun(run('r2', { createdAt: at(5).toISOString() }));
        await ledger.createRun(run('r3', { createdAt: at(9).toISOString() }));
        const agent = (await ledger.getRun('r1'))!.agent;
        expect((await ledger.listRunsOf(agent, 10, { notAfter: at(5).toISOString() })).map((r) => r.runId)).toEqual(['r2', 'r1']);
        expect(await ledger.listRunsOf(agent, 10, { notAfter: at(-1).toISOString() })).toEqual([]);
      });
    });
  });
}
