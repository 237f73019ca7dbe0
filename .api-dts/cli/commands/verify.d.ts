import type { Command } from 'commander';
/** `savepoint verify [runId] | --all`: checks sealed ledger records. */
export declare function registerVerifyCommand(program: Command): void;
