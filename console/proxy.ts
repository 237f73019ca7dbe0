import type { IncomingMessage, ServerResponse } from 'node:http';
import { nodeHttp } from '../lambdas/shared/node-http.js';
import { loopbackHosts } from '../lambdas/shared/loopback-hosts.js';

/** The console's paths (console/server.ts): its page, its assets and its API. */
const CONSOLE_PATH = /^\/(?:$|app\.js$|style\.css$|api\/)/;

/**
 * The console behind another loopback port (`savepoint serve` serves the runs API, the approval
 * API and the console on one): a request for one of the console's paths is passed to the console
 * server as it came, and its answer (an event stream too) passed back. The console refuses a Host
 * or an Origin that is not its own (DNS rebinding, a cross-site POST); they are checked here
 * against this port and then named as the console's, so both checks still hold. Returns whether
 * it took the request.
 */
export function consoleProxy(consoleOrigin: string, servedAt: () => number) {
  const target = new URL(consoleOrigin);
  return (request: IncomingMessage, response: ServerResponse): boolean => {
    // A target that is no URL (`//[`) is none of the console's paths: refused as the port refuses any other.
    const path = URL.parse(request.url ?? '/', 'http://console.invalid')?.pathname;
    if (path === undefined || !CONSOLE_PATH.test(path)) return false;
    const port = servedAt();
    const own = loopbackHosts(port);
    if (!own.has(request.headers.host ?? '')) {
      request.resume();
      response.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `Host ${request.headers.host ?? '(none)'} is not this console's` }));
      return true;
    }
    const { origin } = request.headers;
    const headers = { ...request.headers, host: target.host, ...(origin !== undefined && [...own].some((host) => origin === `http://${host}`) && { origin: target.origin }) };
    const upstream = nodeHttp().request({ hostname: target.hostname, port: target.port, method: request.method, path: request.url, headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    upstream.on('error', () => (response.headersSent ? response.destroy() : response.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'the console did not answer' }))));
    response.on('close', () => upstream.destroy());
    request.pipe(upstream);
    return true;
  };
}
