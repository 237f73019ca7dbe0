import type { Command } from 'commander';
/**
 * `savepoint fork <runId> --at <turn>`: a new run whose first turns are the parent's, then live
 * (lambdas/runs/fork.ts) — on the code `--agent` names, with an edited `--input`, `--model` or
 * `--result` if asked. The hazard report (what the fork may write, what it changes) comes first.
 */
export declare function registerForkCommand(program: Command): void;
