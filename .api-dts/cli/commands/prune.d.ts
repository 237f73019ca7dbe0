import type { Command } from 'commander';
/**
 * `savepoint prune --finished-before <date>`: removes the records of the runs that finished before
 * `date` (and that protocol.ts `pruneVerdict` lets go: no approval pending, no live fork reading
 * them), leaving a sealed record of what was pruned (run ids, record count, digest) that `savepoint
 * verify --all` checks. On the embedded ledger of a state directory (the engine must not be
 * running: it owns the ledger while it runs), and on the DynamoDB one — a state directory's on
 * dynalite, with or without its engine, or a deployed stack's (`--stack`): there, conditional
 * deletes make a prune safe beside live runs (lambdas/ledger/dynamodb-ledger.ts `prune`). This is
 * what bounds a ledger's size, and the time and memory of the commands that open it whole.
 */
export declare function registerPruneCommand(program: Command): void;
