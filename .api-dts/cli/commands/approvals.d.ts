import type { Command } from 'commander';
/** `savepoint approvals`: the approvals waiting, with signed links to the running engine's page. */
export declare function registerApprovalsCommand(program: Command): void;
