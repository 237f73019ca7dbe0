import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { type ConnectionLimits } from '../../lambdas/shared/loopback-server.js';
type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
/**
 * The approval API on loopback, as API Gateway would call the ApprovalCallback function: each HTTP
 * request becomes a REST API proxy event for the same handler, and its result becomes the response.
 *   GET /v1/approvals · GET /v1/approvals/{approvalId} · POST /v1/approvals/{approvalId}
 *   GET /v1/decide/{approvalId}?link=… · POST /v1/decide/{approvalId}
 *   POST /v1/runs (the runs API, RunsApi's function on AWS: a run started as this machine's user)
 * Where API Gateway verifies the caller's SigV4 signature, the loopback API requires its credential
 * (local/services/loopback-credential.ts) on /approvals: its address is `http://127.0.0.1:<port>/<credential>/v1/approvals`,
 * readable only by the state directory's owner, and its requests carry this machine's user as their
 * principal (`local:<user>`, recorded as `cli`). The page (/decide) needs none: its signed link is
 * the credential, as on AWS.
 */
export declare function startApprovalApi(handler: ProxyHandler, options?: {
    port?: number;
    user?: string;
    credential?: string;
    limits?: ConnectionLimits;
    runs?: ProxyHandler;
}): Promise<{
    /** The API's address, with its credential: publish it only where the owner alone can read it. */
    url: string;
    /** The runs API's address (`POST` a run request), with the credential. */
    runsUrl: string;
    /** Where the approval page is served (signed links point here). */
    pageUrl: string;
    port: number;
    close: () => Promise<void>;
}>;
/** This machine's user, as the local approval API records a decider. */
export declare function localUser(): string;
/**
 * A REST API proxy event as API Gateway builds it for the approval API's routes: `principal` is
 * the caller it verified (`requestContext.identity.userArn`; none on the open page). What the
 * loopback server makes of each request, and what a test that plays several people hands the
 * runs API for one of them.
 */
export declare function apiGatewayEvent(request: {
    method: string;
    route: 'approvals' | 'decide' | 'runs';
    approvalId?: string | undefined;
    path?: string;
    headers?: Record<string, string | undefined>;
    query?: Record<string, string> | null;
    body: string | null;
    principal?: string | undefined;
    sourceIp?: string;
    userAgent?: string | null;
}): APIGatewayProxyEvent;
export {};
