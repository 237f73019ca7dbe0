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

/**
 * Why `runId` is no run id, as the runs API's routes, serve's front door and the client each refuse
 * it (400); with what was given when the caller is shown it (the client's, which sent nothing).
 */
export function runIdRefusal(...given: [unknown?]): string {
  return `invalid runId: ${RUN_ID_RULE}${given.length > 0 ? `, got ${JSON.stringify(given[0])}` : ''}`;
}

/** Why `batchId` is no batch id, as serve's front door and the client refuse it (400); `runIdRefusal`'s shape. */
export function batchIdRefusal(...given: [unknown?]): string {
  return `invalid batchId: ${BATCH_ID_RULE}${given.length > 0 ? `, got ${JSON.stringify(given[0])}` : ''}`;
}
