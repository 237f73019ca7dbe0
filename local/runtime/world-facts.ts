import type { LedgerFacts } from '../../lambdas/define.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { pruningOf } from '../../lambdas/ledger/storage-ledger.js';
import { forkSent } from '../../lambdas/runs/fork.js';

/**
 * What the ledger remembers that a simulated world can check its own records against, in generic
 * terms (the harness names no tool's domain): the completed side-effecting tool calls, by tool.
 * A world whose records forget what the ledger says was done (a deleted journal) must say so,
 * or the next run would do it again; so must one whose records hold work of runs the ledger does
 * not know (a deleted ledger beside a kept journal).
 */
export async function ledgerFacts(ledger: Ledger): Promise<LedgerFacts> {
  // Completed writes counted by idempotency key: calls of one effect (a business key, across runs) were done once.
  const done: Record<string, Set<string>> = {};
  const idempotencyKeys = new Set<string>();
  for (const run of await ledger.listRuns(Number.MAX_SAFE_INTEGER)) {
    const { calls } = await ledger.listConversation(run.runId);
    // A fork's copied, dry and reused writes never reached the world (lambdas/runs/fork.ts).
    const lineage = run.forkedFrom;
    const parentCalls = lineage ? (await ledger.listConversation(lineage.runId)).calls : [];
    for (const call of calls) {
      if (call.effect !== 'write') continue;
      idempotencyKeys.add(call.idempotencyKey);
      if (call.status !== 'completed' || call.outcome !== 'ok') continue;
      if (lineage && !forkSent(call, lineage, parentCalls)) continue;
      (done[call.name] ??= new Set()).add(call.idempotencyKey);
    }
  }
  // Runs `savepoint prune` removed claimed their writes too: their prune records keep the keys.
  for (const prune of (await pruningOf(ledger)?.prunes(() => undefined)) ?? []) for (const key of prune.writes ?? []) idempotencyKeys.add(key);
  return { completedWrites: Object.fromEntries(Object.entries(done).map(([name, keys]) => [name, keys.size])), idempotencyKeys };
}
