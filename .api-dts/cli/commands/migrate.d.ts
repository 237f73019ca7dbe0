import type { Command } from 'commander';
/** `savepoint migrate <runId> --to <version>`: a live run moves to the deployed version of its agent. */
export declare function registerMigrateCommand(program: Command): void;
