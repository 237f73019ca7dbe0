import type { Command } from 'commander';
import { Option } from 'commander';
import { z } from 'zod';
import { defaultAgent, err, stateDir } from '../program.js';
import { parseOptions, UsageError, wholeNumberOption } from '../errors.js';

/** `--agent`, repeated: each occurrence adds one. */
const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

/** `savepoint mcp`: the agents of a running `savepoint serve` as MCP tools (cli/mcp.ts). */
export function registerMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description('serve the agents of a running `savepoint serve` to MCP clients: each agent a tool whose call is a durable run (an MCP task); over stdio, or Streamable HTTP with --http')
    .addOption(new Option('--agent <name|path>', 'an agent the engine runs, by its name or the path of its module; repeat it for several (default: $SAVEPOINT_AGENT, else every agent it runs)').argParser(collect))
    .option('--http', 'serve Streamable HTTP on 127.0.0.1 instead of stdio; every request needs "Authorization: Bearer <the credential in engine.json>"')
    .option('--port <port>', 'with --http: the loopback port (default: any free port, printed on stderr)')
    .addHelpText(
      'after',
      `
It drives nothing itself: runs go to the savepoint serve of the state directory (start it first).
A waiting approval shows as input_required; a client that supports elicitation asks its user,
and the answer is decided through the runs API like any other (the agent's approvers and
separation of duties apply). An MCP host's configuration:
  { "command": "npx", "args": ["savepoint", "--state-dir", "/path/to/.savepoint", "mcp", "--agent", "refund-reconciler"] }`,
    )
    .action(async (options: { agent?: string[]; http?: boolean; port?: string }) => {
      // None named: every agent the engine runs (cli/mcp.ts).
      const agents = options.agent ?? (defaultAgent ? [defaultAgent] : []);
      if (options.port !== undefined && !options.http) throw new UsageError('--port: only with --http');
      const { port } = parseOptions(z.object({ port: wholeNumberOption(z.number().max(65535)).optional() }), options);
      const { mcpCommand } = await import('../mcp.js');
      await mcpCommand({ agents, stateDir: stateDir(), http: options.http === true, ...(port !== undefined && { port }) }, { err });
    });
}
