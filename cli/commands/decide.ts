import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { out } from '../program.js';
import { withClient } from '../target.js';

/** `savepoint approve <approvalId>` and `savepoint reject <approvalId>`: one decision, recorded once. */
export function registerDecideCommand(program: Command): void {
  for (const [name, decision] of [['approve', 'approve'], ['reject', 'reject']] as const) {
    program
      .command(`${name} <approvalId>`)
      .description(`${name} a pending approval (through the running engine's approval API, or recorded for the next resume)`)
      .option('--reason <text>', 'why, recorded with the decision')
      .action((approvalId: string, options: { reason?: string }) =>
        withClient(decision, undefined, undefined, async ({ client, live }) => {
          const result = await client.decide(approvalId, decision, { reason: options.reason });
          if (!result.ok) throw new UsageError(`${result.status}: ${result.message}`);
          out(`${approvalId}: ${result.approval.status}${live ? '' : ' (recorded; the run continues when it resumes)'}`);
        }),
      );
  }
}
