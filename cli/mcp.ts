import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { connect, servedAt, type RunsClient } from '../client/connect.js';
import { loadAgent } from '../local/runtime/agents.js';
import { serveMcpHttp } from '../mcp/http.js';
import { savepointMcpServer } from '../mcp/server.js';
import { UsageError } from './errors.js';
import { runningEngine, servedAgentFor, servedAgents, servedList, type ServedAgent } from './state.js';
import { watchStopSignals } from './signals.js';

/**
 * `savepoint mcp`: the agents as MCP tools, their runs on the `savepoint serve` of the state
 * directory (through the public client: the runs API decides, records who asked and checks every
 * decision). Over stdio, nothing but MCP is written to stdout; notes go to stderr.
 */
export async function mcpCommand(options: { agents: string[]; stateDir: string; http: boolean; port?: number }, io: { err: (line: string) => void }): Promise<void> {
  let client: RunsClient;
  try {
    client = await connect({ stateDir: options.stateDir });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const agents = await Promise.all((await servedTools(options.stateDir, options.agents)).map(async ({ module }) => (await loadAgent(module)).agent));
  const info = { name: 'savepoint', version: await packageVersion() };
  const log = (line: string) => io.err(`savepoint mcp: ${line}`);
  const server = () => savepointMcpServer({ runs: client, agents, info, log });
  const signals = watchStopSignals();
  try {
    if (!options.http) {
      // Until the client closes stdin (or a stop signal): the runs go on in serve either way.
      const transport = new StdioServerTransport();
      const closed = new Promise<void>((resolve) => {
        transport.onclose = resolve;
        process.stdin.once('end', resolve);
      });
      const session = server();
      await session.connect(transport);
      await Promise.race([closed, signals.received]);
      await session.close();
      return;
    }
    credentialOf(options.stateDir); // a state directory that names none is refused at start (exit 2)
    // The credential engine.json publishes at each request: a serve that restarted has a new one,
    // which the MCP host reads there, and the old one no longer reaches any serve.
    const endpoint = await serveMcpHttp({ serverForSession: server, credential: () => credentialOf(options.stateDir), ...(options.port !== undefined && { port: options.port }) });
    io.err(`savepoint mcp: Streamable HTTP at ${endpoint.url} (Authorization: Bearer <the credential in ${options.stateDir}/engine.json>)`);
    await signals.received;
    await endpoint.close();
  } finally {
    signals.dispose();
  }
}

/**
 * The agents whose tools `savepoint mcp` lists: those `--agent` names (by name or module path), each
 * one the engine runs, or every agent it runs. Each is loaded from the module the engine loaded it
 * from: a tool's schema and description are those of the code its runs run on. An agent the engine
 * does not run is refused at start (exit 2), not listed as a tool whose every call it refuses.
 */
async function servedTools(stateDir: string, specs: readonly string[]): Promise<ServedAgent[]> {
  const engine = await runningEngine(stateDir);
  if (!engine) throw new UsageError(`stateDir: no savepoint engine serves ${stateDir}: start one with \`savepoint serve --agent <name|path>\``);
  const served = servedAgents(stateDir, engine);
  if (specs.length === 0) {
    if (served.length === 0) throw new UsageError('name the agents to serve: --agent <name|path> (or $SAVEPOINT_AGENT)');
    return served;
  }
  return specs.map((spec) => {
    const agent = servedAgentFor(spec, served);
    if (!agent) throw new UsageError(`--agent ${spec}: the engine on ${stateDir} (pid ${engine.pid}) runs ${servedList(served)}, not ${spec}: its tool would start runs the engine refuses`);
    return agent;
  });
}

/** The owner's credential of the serve on this state directory (the first path segment of its runs API). */
function credentialOf(stateDir: string): string {
  const credential = new URL(servedAt(stateDir).base).pathname.split('/')[1];
  if (!credential) throw new UsageError(`stateDir: the engine.json of ${stateDir} names no credential: restart savepoint serve`);
  return credential;
}

async function packageVersion(): Promise<string> {
  const { createRequire } = await import('node:module');
  for (const path of ['../package.json', '../../package.json']) {
    try {
      return (createRequire(import.meta.url)(path) as { version: string }).version;
    } catch {
      // the other layout (sources or dist/)
    }
  }
  return '0';
}
