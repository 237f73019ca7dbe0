/**
 * A run id's rule, without zod: a run id names its execution (Step Functions' StartExecution
 * `name`), so it is held to the characters that name takes everywhere — a URL path, an ARN. The
 * runs API's schema (run-request.ts `RunId`) and the client (which checks what it cannot ask the
 * API about, such as the run of an approvals listing) share it.
 */
export const RUN_ID_PATTERN = /^[A-Za-z0-9_-]{1,80}$/;
export const RUN_ID_RULE = 'expected 1-80 letters, digits, "-" or "_" (it names the execution)';

/**
 * A batch id's rule: it leaves room in a run id (80 characters) for `-` and the item's index or
 * key. The batches API's schema (batch.ts `BatchId`) and the client share it.
 */
export const BATCH_ID_PATTERN = /^[A-Za-z0-9_-]{1,40}$/;
export const BATCH_ID_RULE = 'expected 1-40 letters, digits, "-" or "_" (its runs are named <batchId>-<item>)';
