/**
 * A loopback HTTP endpoint speaking the Step Functions AWS JSON 1.0 protocol, so the real
 * @aws-sdk/client-sfn (endpoint http://127.0.0.1:<port>) drives a LocalEngine.
 */
import type { HttpHandlerOptions, HttpRequest, HttpResponse } from '@smithy/types';
import { type HttpService } from '../../sim/in-process.js';
import { type LocalEngine } from '../engine/local-engine.js';
import type { IamAuthorizer } from '../aws/iam/authorizer.js';
import type { RoleCredentials } from '../aws/iam/credentials.js';
import type { SfnQuotas } from '../aws/sfn-api-throttling.js';
export interface SfnEndpoint {
    url: string;
    port: number;
    /**
     * An SDK request handler that reaches this endpoint in process (the same service, no socket):
     * `new SFNClient({ endpoint: url, requestHandler })` still serializes, signs and parses every
     * call as the SDK does, without the loopback round trip. Other hosts are refused.
     */
    requestHandler: InProcessRequestHandler;
    close(): Promise<void>;
}
/**
 * The twin's IAM at this endpoint: who signed each call (by its access key) and whether that
 * caller's role may make it. @default no IAM (every call allowed)
 */
export interface SfnEndpointIam {
    readonly authorizer: IamAuthorizer;
    readonly credentials: RoleCredentials;
}
export declare function startSfnEndpoint(engine: LocalEngine, opts?: {
    port?: number;
    iam?: SfnEndpointIam;
    quotas?: SfnQuotas;
    credential?: string;
}): Promise<SfnEndpoint>;
/** The Step Functions JSON 1.0 protocol over the engine, as a function from request to reply. */
/**
 * @param iam who may call what (local/aws/iam) @default every call allowed
 * @param quotas the per-account API throttling (local/aws/sfn-api-throttling.ts) @default none
 */
export declare function sfnService(engine: LocalEngine, iam?: SfnEndpointIam, quotas?: SfnQuotas): HttpService;
/**
 * The smithy `HttpHandler` shape (what `requestHandler` takes), answering from `service` in process.
 * Only requests to the endpoint's own host and port are served.
 */
export declare class InProcessRequestHandler {
    #private;
    readonly metadata: {
        handlerProtocol: string;
    };
    constructor(url: string, service: HttpService);
    handle(request: HttpRequest, options?: HttpHandlerOptions): Promise<{
        response: HttpResponse;
    }>;
    updateHttpClientConfig(): void;
    httpHandlerConfigs(): Record<string, never>;
    destroy(): void;
}
