import type { Command } from 'commander';
/**
 * `savepoint trace <runId>`: the run's whole trace rebuilt from its sealed ledger records and
 * exported to the OTLP endpoint the standard variables name: the same span ids and attributes
 * the live export sent (lambdas/telemetry/spans.ts), so a run that crashed, or ran before tracing
 * was configured, gets its complete trace. With no endpoint configured, the tree is printed.
 */
export declare function registerTraceCommand(program: Command): void;
