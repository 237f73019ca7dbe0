import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { type StartRouteDeps } from '../runs/start-route.js';
/**
 * The runs API, a route of the approval API (REST, proxy integration, IAM-signed):
 *   POST /runs   {"runId"?, "input", "config"?, "model"?, "force"?, "fork"?, "stateMachineArn"?, "executionName"?}
 *                → 202 {"runId", "executionArn", "startedBy"}
 * The run is started as the caller API Gateway verified (callerOf: the person an IAM principal
 * stands for), signed so that StartRun records it as the run's starter (runs/starter.ts). A
 * request without a verified caller starts nothing (403).
 */
export declare function createRunsApi(deps: StartRouteDeps): (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;
export declare function runsApiHandler(deps: StartRouteDeps, middlewares?: readonly middy.MiddlewareObj[]): middy.MiddyfiedHandler<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context, {}>;
