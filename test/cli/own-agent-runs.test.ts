import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { supportTriage } from '../../agents/support-triage/agent.dev.js';
import { startAgentHarness, waitFor } from '../support/agent-harness.js';
import { startHarness } from '../support/refund-harness.js';

/**
 * Agents may share a state directory. A run is only ever driven, recovered or given up by an
 * engine of its own agent: another agent's engine would start it on its own state machine, fail
 * each start and give it up as Agent.Unrecoverable.
 */

/** A refund above the approval threshold: the run waits on its approval when its engine goes away. */
const day = makeSampleDay(7, { plain: 1, already_refunded: 0, mismatch: 0, large: 1 });
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('the watchdog on a state directory two agents share', () => {
  it("leaves another agent's unfinished run alone; an engine of the run's own agent resumes it", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'savepoint-two-agents-'));
    cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
    const first = await startHarness({ day, stateDir });
    first.stack.engine.startExecution({ name: 'before', input: { runId: 'orphan', input: { date: day.date }, config: { approvalTimeoutSeconds: 600 } } });
    await waitFor(() => first.approvals[0]);
    await first.stack.close();

    const other = await startAgentHarness({ agent: supportTriage, stateDir });
    cleanups.push(() => other.stack.close());
    expect(await other.stack.recoverOrphans()).toEqual([]);
    expect(other.stack.engine.listExecutions().executions).toEqual([]);
    const untouched = (await other.stack.ledger.getRun('orphan'))!;
    expect(untouched.status).toBe('running');
    expect(untouched.recovery).toBeUndefined();
    await other.stack.close();

    const own = await startHarness({ day, stateDir });
    cleanups.push(() => own.stack.close());
    expect(await own.stack.recoverOrphans()).toEqual([expect.objectContaining({ runId: 'orphan', action: 'recovered', attempt: 1 })]);
  });
});
