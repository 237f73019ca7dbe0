import type { Command } from 'commander';
/** `savepoint run`: an agent on the local engine, or a run started on a deployed stack (`--stack`). */
export declare function registerRunCommand(program: Command): void;
export declare function runAndReport(options: Record<string, unknown>): Promise<void>;
