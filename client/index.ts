/**
 * The client applications use to drive savepoint runs: start a run (idempotent on its run id),
 * read its status and result, wait for it, cancel it, list and decide approvals. `connect` is
 * the applications' client: HTTP only, to the runs API of `savepoint serve` or of a deployed
 * stack (client/connect.ts). No ledger is part of it: the CLI's own client, which reads the
 * ledger, is internal (client/ledger-client.ts).
 *
 * @example
 * ```ts
 * import { connect } from 'savepoint/client';
 *
 * const client = await connect({ stateDir: '.savepoint' }); // `savepoint serve`; or { stack, region }
 * const { runId } = await client.start({ input: { date: '2026-12-01' } });
 * console.log((await client.wait(runId)).lifecycle); // 'completed'
 * ```
 *
 * @packageDocumentation
 */
export { lifecycleOf, type Lifecycle } from '../lambdas/runs/lifecycle.js';
export { connect, runsClient, RunsApiError, type Approval, type Batch, type BatchRunStatus, type StartBatchOptions, type ConnectOptions, type Run, type RunEvent, type RunPage, type RequestOptions, type RunsClient, type RunsEndpoint, type RunSummary, type StartedRun, type StartFork, type StartOptions } from './connect.js';
