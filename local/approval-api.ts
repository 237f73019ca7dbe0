import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lambdaContext } from './lambda-context.js';

type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const MAX_BODY = 64 * 1024;
const ROUTE = /^\/v1\/approvals(?:\/([^/]+))?\/?$/;

/**
 * The approval API on loopback, as API Gateway would call the ApprovalCallback function: each HTTP
 * request becomes a REST API proxy event for the same handler, and its result becomes the response.
 *   GET /v1/approvals · GET /v1/approvals/{approvalId} · POST /v1/approvals/{approvalId}
 */
export async function startApprovalApi(handler: ProxyHandler, options: { port?: number } = {}) {
  const server = createServer(async (request, response) => {
    try {
      const url = new URL(request.url ?? '/', 'http://localhost');
      const match = ROUTE.exec(url.pathname);
      if (!match) {
        response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `no route ${url.pathname}` }));
        return;
      }
      const body = await readBody(request);
      const event = proxyEvent(request, url, match[1] === undefined ? undefined : decodeURIComponent(match[1]), body);
      const result = await handler(event, lambdaContext('ApprovalCallback', 30_000));
      response.writeHead(result.statusCode, result.headers as Record<string, string>).end(result.body);
    } catch (error) {
      response.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ message: String(error) }));
    }
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1/approvals`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readBody(request: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new Error('request body too large');
    chunks.push(chunk as Buffer);
  }
  return chunks.length === 0 ? null : Buffer.concat(chunks).toString('utf8');
}

function proxyEvent(request: IncomingMessage, url: URL, approvalId: string | undefined, body: string | null): APIGatewayProxyEvent {
  const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(',') : value]));
  const resource = approvalId === undefined ? '/approvals' : '/approvals/{approvalId}';
  return {
    resource,
    path: url.pathname.replace(/^\/v1/, ''),
    httpMethod: request.method ?? 'GET',
    headers,
    multiValueHeaders: {},
    queryStringParameters: url.searchParams.size > 0 ? Object.fromEntries(url.searchParams) : null,
    multiValueQueryStringParameters: null,
    pathParameters: approvalId === undefined ? null : { approvalId },
    stageVariables: null,
    body,
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      protocol: 'HTTP/1.1',
      httpMethod: request.method ?? 'GET',
      identity: { sourceIp: request.socket.remoteAddress ?? '127.0.0.1', userAgent: request.headers['user-agent'] ?? null } as APIGatewayProxyEvent['requestContext']['identity'],
      path: url.pathname,
      stage: 'v1',
      requestId: randomUUID(),
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: resource,
    },
  } as APIGatewayProxyEvent;
}
