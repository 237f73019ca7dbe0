/**
 * `savepoint mcp --http`: the MCP server over Streamable HTTP on loopback, one MCP session per
 * client. Every request carries the owner's credential as a bearer token (a header a browser never
 * attaches on its own), and DNS rebinding is refused by the SDK's Host and Origin checks: a web
 * page the owner visits can neither start runs nor answer approvals.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { nodeHttp } from '../lambdas/shared/node-http.js';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Server as McpServer } from '@modelcontextprotocol/sdk/server/index.js';
import { loopbackHosts } from '../lambdas/shared/loopback-hosts.js';

/** What `serveMcpHttp` serves, and behind what credential. */
export interface McpHttpOptions {
  /** A new MCP server for each session (`savepointMcpServer`). */
  readonly serverForSession: () => McpServer;
  /**
   * The bearer token every request must carry; a function is asked at each request, for a token
   * that changes (`savepoint mcp`: the credential of the serve on its state directory, new at each
   * restart of serve). When it throws, the request is refused (503) with its message.
   */
  readonly credential: string | (() => string);
  /** The loopback port. @default a free one */
  readonly port?: number;
}

/** The MCP endpoint `serveMcpHttp` serves. */
export interface McpHttpEndpoint {
  /** The MCP endpoint's URL (`http://127.0.0.1:<port>/mcp`). */
  readonly url: string;
  /** Stops taking requests and ends every session. */
  close(): Promise<void>;
}

/** Serves MCP over Streamable HTTP at `/mcp` on 127.0.0.1. */
export async function serveMcpHttp(options: McpHttpOptions): Promise<McpHttpEndpoint> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const credential = options.credential;
  const authorized = (request: IncomingMessage, expected: Buffer) => {
    const given = Buffer.from(request.headers.authorization ?? '');
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  // This loopback server's own Host headers and origins (set once it listens): DNS rebinding, and a
  // browser page of another origin, are refused by the SDK's transport (an absent Origin, a non-browser client's, passes).
  let allowedHosts: string[] = [];
  let allowedOrigins: string[] = [];
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    if (new URL(request.url ?? '/', 'http://localhost').pathname !== '/mcp') return refuse(response, 404, 'not found: the MCP endpoint is /mcp');
    let expected: Buffer;
    try {
      expected = Buffer.from(`Bearer ${typeof credential === 'string' ? credential : credential()}`);
    } catch (error) {
      return refuse(response, 503, error instanceof Error ? error.message : String(error));
    }
    if (!authorized(request, expected)) return refuse(response, request.headers.authorization ? 403 : 401, 'the MCP endpoint needs the owner\'s credential as "Authorization: Bearer <token>"');
    const sessionId = request.headers['mcp-session-id'];
    const known = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (known) return known.handleRequest(request, response);
    if (typeof sessionId === 'string') return refuse(response, 404, `no MCP session ${sessionId}: initialize a new one`);
    // A request without a session: an initialize (any other is refused by the transport, 400).
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, transport),
      onsessionclosed: (id) => void sessions.delete(id),
      enableDnsRebindingProtection: true,
      allowedHosts,
      allowedOrigins,
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await options.serverForSession().connect(transport);
    await transport.handleRequest(request, response);
  };
  const server: Server = nodeHttp().createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) refuse(response, 500, 'internal error');
      else response.destroy(error instanceof Error ? error : undefined);
    });
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  allowedHosts = [...loopbackHosts(port)];
  allowedOrigins = allowedHosts.map((host) => `http://${host}`);
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      await Promise.all([...sessions.values()].map((transport) => transport.close()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function refuse(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}
