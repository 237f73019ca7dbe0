/**
 * `savepoint/mcp`: savepoint's agents as an MCP server (the Model Context Protocol's Tasks): each
 * agent a tool whose call is a durable run, served over stdio or Streamable HTTP with the official
 * `@modelcontextprotocol/sdk`. The `savepoint mcp` command is this module in front of a
 * `savepoint serve`; an application can mount it in front of any runs API client.
 *
 * @example
 * ```ts
 * import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
 * import { connect } from 'savepoint/client';
 * import { savepointMcpServer } from 'savepoint/mcp';
 * import { refunds } from './agent.js'; // a defineAgent definition: its name and input schema are served
 *
 * const client = await connect({ stateDir: '.savepoint' });
 * await savepointMcpServer({ runs: client, agents: [refunds] }).connect(new StdioServerTransport());
 * ```
 *
 * @packageDocumentation
 */
export { savepointMcpServer, taskOf, resultOf, type McpAgent, type McpRun, type McpRunEvent, type McpRuns, type SavepointMcpOptions } from './server.js';
export { serveMcpHttp, type McpHttpEndpoint, type McpHttpOptions } from './http.js';
