import type { Command } from 'commander';
/** `savepoint world`: what the agent's simulated world holds. */
export declare function registerWorldCommand(program: Command): void;
