import type { Command } from 'commander';
/** `savepoint resume <runId>`: `run` for a run that exists, locally or on a deployed stack. */
export declare function registerResumeCommand(program: Command): void;
