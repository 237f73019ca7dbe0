import type { Command } from 'commander';
/** `savepoint runs`: the runs, newest first. */
export declare function registerRunsCommand(program: Command): void;
