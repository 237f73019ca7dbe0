import type { Command } from 'commander';
/** `savepoint breakers`: the circuit breakers shared by all runs. */
export declare function registerBreakersCommand(program: Command): void;
