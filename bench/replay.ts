import { refundReconciler } from '../agents/refund-reconciler/agent.dev.js';
import { replayRun } from '../local/replay/index.js';
import { startLocalStack } from '../local/runtime.js';
import { waitForChain } from '../local/chain.js';

/**
 * `savepoint replay`'s speed: the sample day run once on the local stack (approvals decided at
 * once), then replayed from its ledger with no live call. Prints both wall times and the share.
 * Run: `node --import tsx bench/replay.ts` (bench/main.ts's `--replay` mode would call `replayBench`).
 */
export async function replayBench(): Promise<{ runMs: number; replayMs: number; share: number }> {
  let approvals = '';
  const stack = await startLocalStack({
    agent: refundReconciler,
    retryDelayMs: 1,
    onApproval: (approval) =>
      void fetch(`${approvals}/${approval.approvalId}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'approve' }) }),
  });
  approvals = stack.endpoints.approvals;
  try {
    const { executionArn } = stack.engine.startExecution({ name: 'bench-day', input: { runId: 'bench-day', input: stack.world.defaultInput } });
    await waitForChain(stack.engine, stack.ledger, 'bench-day', executionArn);
    const result = await replayRun({ agent: refundReconciler, source: stack.ledger, runId: 'bench-day' });
    if (!result.identical) throw new Error(`replay diverged: ${JSON.stringify(result.divergence)}`);
    return { runMs: result.recordedWallMs, replayMs: result.wallMs, share: result.wallMs / result.recordedWallMs };
  } finally {
    await stack.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { runMs, replayMs, share } = await replayBench();
  console.log(`replay of the sample day: run ${runMs} ms, replay ${replayMs} ms (${(share * 100).toFixed(0)}% of the run; target ≤ 10%)`);
}
