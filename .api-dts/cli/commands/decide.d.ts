import type { Command } from 'commander';
/** `savepoint approve <approvalId>` and `savepoint reject <approvalId>`: one decision, recorded once. */
export declare function registerDecideCommand(program: Command): void;
