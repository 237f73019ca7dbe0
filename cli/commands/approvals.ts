import type { Command } from 'commander';
import { signedLinks } from '../../lambdas/approvals/decision.js';
import { localUser } from '../../local/services/approval-api.js';
import { localApprovalKeys } from '../../local/state/approval-keys.js';
import { formatApproval } from '../format.js';
import { out, printJson, stateDir } from '../program.js';
import { withClient } from '../target.js';
import type { EngineFile } from '../state.js';

/** `savepoint approvals`: the approvals waiting, with signed links to the running engine's page. */
export function registerApprovalsCommand(program: Command): void {
  program
    .command('approvals')
    .description('the approvals waiting for a decision')
    .option('--json', 'print JSON', false)
    .action((options: { json: boolean }) =>
      withClient('approvals', undefined, undefined, async ({ client, engine, parts }) => {
        // Links point at the approval page of the engine that runs the approval's run, signed with
        // its directory's key (serve with several agents: each agent's directory has its own).
        const linksIn = (dir: string, running: EngineFile | undefined) => {
          const pageUrl = running?.endpoints['approvalPage'];
          return pageUrl ? { signer: localApprovalKeys(dir).links, pageUrl, approvers: [localUser()] } : undefined;
        };
        const holderOf = async (runId: string) => {
          for (const part of parts ?? []) if (await part.ledger.getRun(runId)) return linksIn(part.dir, part.engine);
          return linksIn(stateDir(), engine);
        };
        const pending = await Promise.all(
          (await client.approvals()).map(async (approval) => ({ ...approval, links: await signedLinks(await holderOf(approval.runId), approval) })),
        );
        if (options.json) printJson({ approvals: pending });
        else out(pending.length === 0 ? 'no approval is waiting' : pending.map(formatApproval).join('\n'));
      }),
    );
}
