/**
 * `node:http` as a step's bundle imports it (infra/step-bundle.ts aliases `http` and `node:http`
 * here): the module itself, from `process.getBuiltinModule` (lambdas/shared/node-http.ts), not
 * Node's ESM facade of it. The SDK's HTTP handler imports `node:http`; the facade reads every export
 * of the module, and three of them (WebSocket, CloseEvent, MessageEvent) load Node's bundled undici:
 * 25–70 ms of every function's cold start (npm run bench -- --cold-start), for classes no step uses.
 * A name a dependency imports and this file lacks fails the bundle's build, not a cold start.
 */
import { nodeHttp } from '../shared/node-http.js';

// A step's bundle reads the module's exports as it loads: taken now.
const http = nodeHttp();
export default http;
export const {
  METHODS,
  STATUS_CODES,
  Agent,
  ClientRequest,
  IncomingMessage,
  OutgoingMessage,
  Server,
  ServerResponse,
  createServer,
  validateHeaderName,
  validateHeaderValue,
  get,
  request,
  setMaxIdleHTTPParsers,
  maxHeaderSize,
  globalAgent,
} = http;
