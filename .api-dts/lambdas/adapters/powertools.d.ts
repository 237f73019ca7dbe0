import type middy from '@middy/core';
import type { Telemetry } from './middleware.js';
/**
 * Powertools for AWS Lambda behind the middleware's `Telemetry`: Logger (JSON lines with the
 * appended run keys; `POWERTOOLS_LOG_LEVEL`, INFO by default), Metrics (EMF in namespace
 * `Savepoint`, dimension `service` = the agent), Tracer (X-Ray: the handler, the AWS SDK clients
 * passed to `traced`, and outbound `fetch` — the model and the agent's tools — as subsegments).
 * One instance per container.
 */
export declare function powertools(serviceName: string): {
    telemetry: Telemetry;
    /** The handler's X-Ray subsegment; its response (ids and counts only) as metadata. */
    tracing: middy.MiddlewareObj;
    /** An AWS SDK v3 client whose calls become subsegments. */
    traced: <T>(client: T) => T;
};
