import type { Command } from 'commander';
import { out, printJson } from '../program.js';
import { noRunError, withClient } from '../target.js';

/** `savepoint migrate <runId> --to <version>`: a live run moves to the deployed version of its agent. */
export function registerMigrateCommand(program: Command): void {
  program
    .command('migrate <runId>')
    .description("move a live run to the deployed version of its agent, if that version declares the run's version compatible (recorded in the run)")
    .requiredOption('--to <version>', "the agent version to move the run to: the deployed one (the agent's `version`)")
    .option('--json', 'print JSON', false)
    .action((runId: string, options: { to: string; json: boolean }) =>
      withClient('migrate', undefined, runId, async ({ client, ledger, parts }) => {
        // A run id the ledger does not hold is said as the other commands say it (a pruned one named).
        if (!(await ledger.getRun(runId))) throw await noRunError(runId, { ledger, parts });
        // The approval API's module loads with the command that records who migrated (as kill's does).
        const { localUser } = await import('../../local/services/approval-api.js');
        const view = await client.migrate(runId, { to: options.to, by: localUser() });
        const migration = view.report.version.migrations.at(-1)!;
        if (options.json) return printJson({ runId, lifecycle: view.lifecycle, migration });
        out(`run ${runId}: migrated from version ${migration.from.version} (${migration.from.fingerprint}) to ${migration.to.version} (${migration.to.fingerprint}); it continues on the new version from its next step`);
      }),
    );
}
