import type { Command } from 'commander';
import { RunsApiError } from '../../client/runs-api-error.js';
import { UsageError } from '../errors.js';
import { out } from '../program.js';
import { withRuns } from '../target.js';

/** `savepoint approve <approvalId>` and `savepoint reject <approvalId>`: one decision, recorded once. */
export function registerDecideCommand(program: Command): void {
  for (const [name, decision] of [['approve', 'approve'], ['reject', 'reject']] as const) {
    program
      .command(`${name} <approvalId>`)
      .description(`${name} a pending approval (through the running engine's approval API, or recorded for the next resume)`)
      .option('--reason <text>', 'why, recorded with the decision')
      .action((approvalId: string, options: { reason?: string }) =>
        withRuns(decision, undefined, async ({ client, live }) => {
          const approval = await client.decide(approvalId, decision, { ...(options.reason !== undefined && { reason: options.reason }) }).catch((error: unknown) => {
            // A refusal of the decision (not yours to decide, no such approval, decided or expired already) names its status; bad input (400) speaks for itself.
            throw error instanceof RunsApiError && REFUSALS.includes(error.status) ? new UsageError(`${error.status}: ${error.message}`) : error;
          });
          // An approval that needs two people is still pending after the first: say whose approval
          // was recorded and that it waits for someone else, not a bare `pending` (nothing happened?).
          const first = approval.status === 'pending' ? approval.firstApproval : undefined;
          const outcome = first ? `pending: waiting for a second person to approve (approved first by ${first.by})` : approval.status;
          out(`${approvalId}: ${outcome}${live ? '' : ' (recorded; the run continues when it resumes)'}`);
        }),
      );
  }
}

/** The approval API's refusals of a decision (lambdas/approvals/decision.ts DecideResult). */
const REFUSALS: readonly number[] = [401, 403, 404, 409, 410];
