import type { Command } from 'commander';
/** `savepoint status <runId>`: a run's report, from the ledger. */
export declare function registerStatusCommand(program: Command): void;
/** What `status` says of a running run no engine drives, with the command that resumes it. */
export declare function undrivenHint(runId: string, agent: string, engineAgent: string | undefined): string;
