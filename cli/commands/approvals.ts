import type { Command } from 'commander';
import { formatApproval } from '../format.js';
import { out, printJson, stateDir } from '../program.js';
import { agentDir } from '../state.js';
import { withRuns } from '../target.js';

/** `savepoint approvals`: the approvals waiting, with signed links to the running engine's page. */
export function registerApprovalsCommand(program: Command): void {
  program
    .command('approvals')
    .description('the approvals waiting for a decision')
    .option('--json', 'print JSON', false)
    .action((options: { json: boolean }) =>
      withRuns('approvals', undefined, async ({ client, engines }) => {
        const approvals = await client.approvals();
        // Links point at the approval page of the engine that runs the approval's run, signed with
        // its directory's key (serve with several agents: each agent's directory has its own).
        const pages = engines.filter(({ engine }) => engine.endpoints['approvalPage']);
        const links = pages.length === 0 ? undefined : await import('../approval-links.js');
        const pending = await Promise.all(
          approvals.map(async (approval) => {
            const holder = pages.find(({ dir }) => approval.agent !== undefined && dir === agentDir(stateDir(), approval.agent)) ?? pages.find(({ dir }) => dir === stateDir());
            return { ...approval, links: links && holder ? await links.signedLinksIn(holder.dir, holder.engine.endpoints['approvalPage']!, approval) : [] };
          }),
        );
        if (options.json) printJson({ approvals: pending });
        else out(pending.length === 0 ? 'no approval is waiting' : pending.map(formatApproval).join('\n'));
      }),
    );
}
