/**
 * A run id's rule, without zod: a run id names its execution (Step Functions' StartExecution
 * `name`), so it is held to the characters that name takes everywhere — a URL path, an ARN. The
 * runs API's schema (run-request.ts `RunId`) and the client (which checks what it cannot ask the
 * API about, such as the run of an approvals listing) share it.
 */
export const RUN_ID_PATTERN = /^[A-Za-z0-9_-]{1,80}$/;
export const RUN_ID_RULE = 'expected 1-80 letters, digits, "-" or "_" (it names the execution)';
