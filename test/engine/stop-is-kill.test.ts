import { SFNClient, StopExecutionCommand } from '@aws-sdk/client-sfn';
import { afterEach, expect, it } from 'vitest';
import { localAwsConfig } from '../../local/services/aws-config.js';
import { replayRun } from '../../local/replay/index.js';
import { waitFor } from '../support/agent-harness.js';
import { sampleDay, startHarness, type Harness } from '../support/refund-harness.js';

let harness: Harness | undefined;
afterEach(async () => harness?.stack.close());

/** A stop through the Step Functions API is a kill, as the README says: recorded, its approvals closed, never resumed. */
it('a StopExecution on the Step Functions endpoint kills the run: recorded, its approval no longer pending, never resumed', async () => {
  harness = await startHarness();
  const h = harness;
  const finished = h.run({ runId: 'stopped', input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 3600 } }, 'stopped-1');
  const approval = await waitFor(() => h.approvals[0]);
  const run = (await h.stack.ledger.getRun('stopped'))!;
  const sfn = new SFNClient({ ...localAwsConfig, endpoint: h.stack.endpoints.sfn });
  try {
    await sfn.send(new StopExecutionCommand({ executionArn: run.executionArn!, error: 'Ops.Stop', cause: 'by hand' }));
  } finally {
    sfn.destroy();
  }
  expect((await finished).status).toBe('ABORTED');
  const killed = await waitFor(async () => {
    const now = await h.stack.ledger.getRun('stopped');
    return now?.status !== 'running' && now;
  });
  expect(killed).toMatchObject({ status: 'killed', stopReason: expect.stringContaining('killed by StopExecution') });
  expect(await h.stack.ledger.getApproval(approval.runId, approval.turn, approval.call)).toMatchObject({ status: 'expired', decidedBy: 'StopExecution', reason: expect.stringContaining('the run was killed by StopExecution') });
  expect((await h.stack.ledger.listPendingApprovals()).filter((pending) => pending.runId === 'stopped')).toEqual([]);
  // The watchdog resumes runs left running; a killed one is not among them.
  expect(await h.stack.recoverOrphans()).toEqual([]);
  expect((await h.stack.ledger.getRun('stopped'))!.status).toBe('killed');
  // Replayed, the stop is reproduced as the person's act it was, where the run was stopped: identical.
  const replayed = await replayRun({ agent: h.stack.agent, source: h.stack.ledger, runId: 'stopped' });
  expect(replayed, JSON.stringify(replayed.divergence)).toMatchObject({ identical: true, live: { model: 0, tools: 0 } });
});
