/**
 * `savepoint/mcp`: savepoint's agents as an MCP server (the Model Context Protocol's Tasks): each
 * agent a tool whose call is a durable run, served over stdio or Streamable HTTP with the official
 * `@modelcontextprotocol/sdk`. The `savepoint mcp` command is this module in front of a
 * `savepoint serve`; an application can mount it in front of any runs API client.
 *
 * @packageDocumentation
 */
export { savepointMcpServer, taskOf, resultOf, type McpAgent, type McpRun, type McpRuns, type SavepointMcpOptions } from './server.js';
export { serveMcpHttp, type McpHttpEndpoint, type McpHttpOptions } from './http.js';
