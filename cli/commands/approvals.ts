import type { Command } from 'commander';
import { signedLinks } from '../../lambdas/approvals/decision.js';
import { localUser } from '../../local/services/approval-api.js';
import { localApprovalKeys } from '../../local/state/approval-keys.js';
import { formatApproval } from '../format.js';
import { out, printJson, stateDir } from '../program.js';
import { withClient } from '../target.js';

/** `savepoint approvals`: the approvals waiting, with signed links to the running engine's page. */
export function registerApprovalsCommand(program: Command): void {
  program
    .command('approvals')
    .description('the approvals waiting for a decision')
    .option('--json', 'print JSON', false)
    .action((options: { json: boolean }) =>
      withClient('approvals', undefined, undefined, async ({ client, engine }) => {
        // Links point at the running engine's approval page, signed with the state directory's key.
        const pageUrl = engine?.endpoints['approvalPage'];
        const links = pageUrl ? { signer: localApprovalKeys(stateDir()).links, pageUrl, approvers: [localUser()] } : undefined;
        const pending = await Promise.all(
          (await client.approvals()).map(async (approval) => ({ ...approval, links: await signedLinks(links, approval) })),
        );
        if (options.json) printJson({ approvals: pending });
        else out(pending.length === 0 ? 'no approval is waiting' : pending.map(formatApproval).join('\n'));
      }),
    );
}
