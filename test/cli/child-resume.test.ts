import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { childRunId } from '../../lambdas/define.js';
import { ledgerOf, savepoint } from '../support/cli-process.js';
import { scratchDir } from '../support/scratch.js';

/**
 * `savepoint resume` of a child run (defineAgentTool) that failed and was settled into its parent:
 * refused as bad input (exit 2), naming the parent and the child's budget, and nothing is spent —
 * the parent counts the child's spend as final (docs/crashes-and-recovery.md).
 */
const parentAgent = new URL('./fixtures/flaky-delegator.dev.ts', import.meta.url).pathname;
const childAgent = new URL('./fixtures/flaky-look.dev.ts', import.meta.url).pathname;
const runId = 'flaky-parent';
const child = childRunId(runId, 1, 'call_1');

describe('savepoint resume of a child run settled into its parent', { timeout: 120_000 }, () => {
  it('exits 2 naming the parent and the budget, and the child spends nothing more', async () => {
    const stateDir = join(scratchDir('savepoint-child-resume-'), 'state');
    const ran = await savepoint(['--state-dir', stateDir, 'run', '--agent', parentAgent, '--run-id', runId, '--input', '{"invoice":"inv_1"}', '--json'], { env: { SAVEPOINT_TEST_MODEL_DOWN: '1' } });
    expect(ran.code, ran.stderr).toBe(0);
    const before = await ledgerOf(stateDir, child);
    expect(before.run).toMatchObject({ status: 'failed', parent: { runId } });
    expect(before.run!.settledIntoParentAt).toBeDefined();

    // The model is up again; a person resumes the child.
    const resumed = await savepoint(['--state-dir', stateDir, 'resume', child, '--agent', childAgent, '--json'], { env: { SAVEPOINT_TEST_MODEL_DOWN: undefined } });
    expect(resumed.code, resumed.stderr).toBe(2);
    expect(resumed.stderr).toMatch(new RegExp(`child run of ${runId} \\(its tool call 1/1\\).*settled into it.*budget\\.maxDollars \\$0\\.5, budget\\.maxTokens 20000`));
    const after = await ledgerOf(stateDir, child);
    expect(after.run).toMatchObject({ status: 'failed', costMicros: before.run!.costMicros, executions: before.run!.executions });
  });
});
