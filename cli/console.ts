import type { Command } from 'commander';
import { unwatchFile, watchFile } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { AgentDefinition } from '../lambdas/define.js';
import type { Ledger } from '../lambdas/ledger/ledger.js';
import { byCodeUnits } from '../lambdas/shared/text.js';
import { agentModulePath, isAgentPath, loadAgent } from '../local/runtime/agents.js';
import type { AslDefinition, CfnTemplateJson } from '../local/template/asl.js';
import { LEDGER_PATHS } from '../local/state/ledger-files.js';
import { listenRefused, parseOptions, UsageError, wholeNumberOption } from './errors.js';
import { agentDirsOf, openEveryAgent, runningEngine } from './state.js';
import { localLedgerDecisions } from './target.js';
import { watchStopSignals } from './signals.js';
import { schemaOnFirstUse } from '../lambdas/shared/on-first-use.js';

export const ConsoleOptions = schemaOnFirstUse(() =>
  z
    .object({
      stateDir: z.string().min(1),
      port: wholeNumberOption(z.number().max(65535)).default(0),
      /** Anything but loopback serves the console read-only. */
      host: z.string().min(1).default('127.0.0.1'),
      agent: z.string().min(1).optional(),
      /** A deployed stack (`--stack`): the console reads and steers it with the operator's AWS credentials. */
      stack: z.string().min(1).optional(),
      region: z.string().min(1).optional(),
    })
    .strict(),
);

/**
 * `savepoint console`: while an engine runs on the state directory, its console is the one
 * `savepoint run` serves in its process (its address is in engine.json): printed here. Otherwise
 * the console reads the state directory itself (like `status`, one read at a time: it never holds
 * the directory between reads) and serves its runs: decisions are recorded in the ledger and
 * delivered when the run resumes; nothing is started.
 */
export async function consoleCommand(raw: Record<string, unknown>, io: { out: (line: string) => void; err: (line: string) => void }): Promise<void> {
  const options = parseOptions(ConsoleOptions(), raw);
  if (options.stack) return stackConsole({ ...options, stack: options.stack }, io);
  const engine = await runningEngine(options.stateDir);
  if (engine) {
    const url = engine.endpoints['console'];
    if (!url) throw new UsageError(`the engine running on ${options.stateDir} (pid ${engine.pid}) serves no console; stop it and start it again`);
    io.out(`savepoint: console ${url} (served by the engine, pid ${engine.pid})`);
    return;
  }
  // The console's server and the ledger client load when it starts: every other command starts without them.
  const [{ approvalApiDecider, createClient }, { historySource, severalHistories }, { startConsole }, ledgerDecisions] = await Promise.all([
    import('../client/ledger-client.js'),
    import('../console/history.js'),
    import('../console/server.js'),
    localLedgerDecisions(options.stateDir),
  ]);
  const signals = watchStopSignals();
  const opened = { ledger: ledgerBetweenReads(options.stateDir) };
  const dirs = [options.stateDir, ...agentDirsOf(options.stateDir).map(({ dir }) => dir)];
  try {
    // Which agent the newest run ran; a damaged record is left out here and named in the console's run list.
    const runs = await opened.ledger.listRuns(1000, { onDamaged: () => {} });
    const agent = await agentOf(options.agent ?? process.env['SAVEPOINT_AGENT'] ?? runs.sort((a, b) => byCodeUnits(b.createdAt, a.createdAt))[0]?.agent);
    let definition: Promise<AslDefinition | undefined> | undefined;
    // Decided as `savepoint approve` decides, looking again at each decision: through the approval
    // API of an engine that runs on the directory now (one started since the console was: its
    // waiting execution must get the decision), else in the ledger as this machine's user, signed
    // with the directory's decision key, for the run to take when it resumes.
    const inLedger = createClient({ ledger: opened.ledger, ledgerDecisions });
    const decide = async (approvalId: string, body: { decision: 'approve' | 'reject'; reason?: string }) => {
      const engine = await runningEngine(options.stateDir);
      if (engine) return approvalApiDecider(engine.endpoints.approvals)(approvalId, body);
      return inLedger.decide(approvalId, body.decision, body.reason === undefined ? {} : { reason: body.reason });
    };
    const server = await startConsole({
      ledger: opened.ledger,
      client: createClient({ ledger: opened.ledger, decide, ...(agent && { agent }) }),
      // Each agent's directory keeps its executions' log (serve with several agents: agents/<name>/).
      history: severalHistories(dirs.map((dir) => historySource({ file: join(dir, 'history.jsonl') }))),
      subscribe: (onChange) => watchStateFiles(dirs, onChange),
      // The same definition the engine runs, synthesized once when the graph is first asked for.
      definition: () => (definition ??= synthesizedDefinition(agent?.name)),
      canStart: false,
      host: options.host,
      port: options.port,
      ...(agent && { agent: agent.name }),
      log: io.err,
    }).catch((error: unknown) => {
      throw listenRefused(error, options);
    });
    io.out(`savepoint: console ${server.url}`);
    io.out(`savepoint: no engine runs on ${options.stateDir}: decisions are recorded and delivered when a run resumes; the console opens the state directory for each read only, so status, approve or a new run work beside it (Ctrl-C stops the console)`);
    if (server.readOnly) io.out(`savepoint: bound to ${options.host}, not loopback: read-only`);
    await signals.received;
    await server.close();
  } finally {
    signals.dispose();
  }
}

/**
 * The state directory's ledger (every agent's, cli/state.ts openEveryAgent), opened for each read and let go after it (cli/state.ts: one process
 * at a time owns a state directory). A console left open used to hold the directory, locking out
 * every other command; now they work beside it, and while an engine runs the reads go through the
 * engine, as any command's do. Reads are taken one at a time: this process opens the directory once.
 */
function ledgerBetweenReads(stateDir: string): Ledger {
  let queue: Promise<unknown> = Promise.resolve();
  return new Proxy({} as Ledger, {
    get: (_target, method) => {
      if (typeof method !== 'string' || method === 'then') return undefined; // not a thenable
      return (...args: unknown[]) => {
        const call = queue.then(async () => {
          const opened = await openEveryAgent(stateDir, 'console', LEDGER_READS.has(method) ? 'read' : 'write');
          try {
            return await (opened.ledger[method as keyof Ledger] as (...a: unknown[]) => Promise<unknown>).apply(opened.ledger, args);
          } finally {
            await opened.close();
          }
        });
        queue = call.catch(() => undefined);
        return call;
      };
    },
  });
}

/** How often the state directory's files are looked at for changes made beside the console. */
const WATCH_INTERVAL_MS = 500;

/**
 * Calls `onChange` when another process writes the state directory: an engine (its history and
 * ledger), `approve`, `kill`. Without it the console's change counter moved only on its own
 * steers, so a run started beside it never appeared in the list and a run that ended there still
 * showed as running. Polled (fs.watchFile's stat), not inotify: the writers are other processes,
 * on whatever file system the directory is.
 */
function watchStateFiles(dirs: readonly string[], onChange: () => void): () => void {
  const files = dirs.flatMap((dir) => [join(dir, 'history.jsonl'), ...Object.values(LEDGER_PATHS).map((path) => join(dir, path))]);
  const listener = (now: { mtimeMs: number; size: number }, before: { mtimeMs: number; size: number }) => {
    if (now.mtimeMs !== before.mtimeMs || now.size !== before.size) onChange();
  };
  for (const file of files) watchFile(file, { interval: WATCH_INTERVAL_MS, persistent: false }, listener);
  return () => {
    for (const file of files) unwatchFile(file, listener);
  };
}

/** The Ledger methods that write nothing: the console opens the ledger to read (from its index) for them, whole for the others. */
const LEDGER_READS: ReadonlySet<string> = new Set<keyof Ledger>([
  'getRun', 'listRuns', 'listRunningRuns', 'getTurn', 'listConversation', 'loadStep', 'getCall', 'getEffect',
  'getApproval', 'getBudgetApproval', 'findApproval', 'listPendingApprovals', 'getBlob', 'getTaskToken', 'getGlobalKill', 'getBreaker',
]);

/** `savepoint --stack <name> console`: the console on a deployed stack, until Ctrl-C. */
async function stackConsole(options: z.infer<ReturnType<typeof ConsoleOptions>> & { stack: string }, io: { out: (line: string) => void; err: (line: string) => void }): Promise<void> {
  // Loaded only here: a local run never pays for the AWS SDK clients of a deployed stack.
  const [{ describeDeployment }, { startStackConsole }] = await Promise.all([import('../client/aws.js'), import('../console/stack.js')]);
  const deployment = await describeDeployment({ stackName: options.stack, ...(options.region && { region: options.region }), ...(options.agent && !isAgentPath(options.agent) && { agent: options.agent }) });
  const agent = await agentOf(options.agent ?? deployment.agentName);
  const signals = watchStopSignals();
  try {
    const server = await startStackConsole(deployment, { host: options.host, port: options.port, log: io.err, ...(agent && { agent }) }).catch((error: unknown) => {
      throw listenRefused(error, options);
    });
    io.out(`savepoint: console ${server.url}`);
    if (server.readOnly) io.out(`savepoint: bound to ${options.host}, not loopback: read-only`);
    io.out(`savepoint: stack ${deployment.stackName} (${deployment.region}), agent ${deployment.agentName}: read${server.readOnly ? '' : ' and steered'} with your AWS credentials (Ctrl-C stops the console)`);
    await signals.received;
    await server.close();
  } finally {
    signals.dispose();
  }
}

async function agentOf(spec: string | undefined): Promise<AgentDefinition | undefined> {
  if (!spec) return undefined;
  try {
    agentModulePath(spec);
  } catch {
    return undefined; // an agent that is not here: the console shows its runs without its summary
  }
  return (await loadAgent(spec)).agent;
}

async function synthesizedDefinition(agentName: string | undefined): Promise<AslDefinition | undefined> {
  const [{ synthesizeTemplate }, { extractStateMachine }] = await Promise.all([import('../local/template/synthesize.js'), import('../local/template/asl.js')]);
  return extractStateMachine((await synthesizeTemplate(agentName)) as CfnTemplateJson).definition;
}

/** Adds `savepoint console`, and `--console-port` to `run` and `resume`. */
export function registerConsoleCommand(program: Command, stateDir: () => string, io: { out: (line: string) => void; err: (line: string) => void }): void {
  for (const command of program.commands.filter((c) => c.name() === 'run' || c.name() === 'resume')) {
    command.option('--console-port <n>', 'the port of the console the run serves (default: any free port)');
  }
  program
    .command('console')
    .description('watch and steer runs in a browser: the running engine\'s console, one on the state directory, or with --stack one on a deployed stack')
    .option('--port <n>', 'the port to serve on (default: any free port)')
    .option('--host <address>', 'the address to bind; anything but loopback is read-only', '127.0.0.1')
    .option('--agent <name|path>', "the runs' agent, for its summary and the state machine (default: the newest run's; with --stack: the stack's one)")
    .action((options: Record<string, unknown>) => {
      // `--stack` and `--region` are the program's: `savepoint console --stack <name>` reads the deployed stack.
      const { stack, region } = program.opts<{ stack?: string; region?: string }>();
      return consoleCommand({ ...options, stateDir: stateDir(), ...(stack && { stack }), ...(region && { region }) }, io);
    });
}
