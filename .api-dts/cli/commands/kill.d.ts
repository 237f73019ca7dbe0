import type { Command } from 'commander';
/** `savepoint kill [runId] | --all [--lift]`: a run, or every run, stops before its next step. */
export declare function registerKillCommand(program: Command): void;
