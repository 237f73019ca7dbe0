import type { RunsClient } from '../client/index.js';
import type { SavepointClient } from '../client/ledger-client.js';
import type { AgentDefinition } from '../lambdas/define.js';
import type { Ledger } from '../lambdas/ledger/ledger.js';
import type { PruneRecord } from '../lambdas/ledger/pruning.js';
import type { HistoryEvent } from '../local/engine/history.js';
import type { ExecutionFigures } from './format.js';
import { counted } from '../lambdas/shared/text.js';
import { agentModulePath, isAgentPath, loadAgent } from '../local/runtime/agents.js';
import { localAwsConfig } from '../local/services/aws-config.js';
import { defaultAgent, deployed, err, nextCommand, stateDir } from './program.js';
import { describe, UsageError } from './errors.js';
import { agentDir, agentDirsOf, openEveryAgent, openLedger, rememberedAgentModule, runningEngine, type AgentDir, type EngineFile, type LedgerAccess, type OpenLedger } from './state.js';
import { liveOwner, lockFilePath } from './owner.js';
import { existsSync } from 'node:fs';

/** What a command works on: the agent, the ledger, a client of the local state directory or the deployed stack. */

/**
 * The agent a command names, else the one the running engine runs (`engine`: the caller's view of
 * it, when it holds the state directory already), else the one that ran the run in question.
 */
export async function agentFor(explicit: string | undefined, runAgent?: string, engine?: EngineFile | null): Promise<AgentDefinition | undefined> {
  const running = engine === undefined ? await runningEngine(stateDir()) : (engine ?? undefined);
  const recorded = runAgent && recordedAgent(stateDir(), runAgent);
  const spec = explicit ?? running?.agent?.module ?? recorded ?? defaultAgent;
  if (!spec) return undefined;
  // A name only the run recorded is the project's own agent before anything in the current directory.
  const origin = spec === recorded && spec !== explicit && spec !== running?.agent?.module ? 'recorded' : 'asked';
  try {
    agentModulePath(spec, origin);
  } catch (error) {
    // An agent the user named must be there (the message names the path or name looked for).
    if (spec === explicit) throw error;
    return undefined; // an agent that is not here: the report goes without its own summary
  }
  return (await loadAgent(spec, origin)).agent;
}

/**
 * How a run's agent is found here: by its name, or else by the module it ran from in `dir` (cli/state.ts
 * agents.json: an agent given by its path), or else its name, which then finds nothing.
 */
export function recordedAgent(dir: string, runAgent: string): string {
  return findsByName(runAgent) ? runAgent : (rememberedAgentModule(dir, runAgent) ?? runAgent);
}

function findsByName(name: string): boolean {
  try {
    agentModulePath(name, 'recorded');
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `use` with the state directory's ledger (the running engine's, or opened here), then closes
 * it. A command that only reads (LEDGER_ACCESS) opens it to read, from its index.
 */
async function withLedger<T>(command: string, use: (opened: OpenLedger) => Promise<T>): Promise<T> {
  const open = EVERY_AGENT.has(command) ? openEveryAgent : openLedger;
  const opened = await open(stateDir(), command, LEDGER_ACCESS[command] ?? 'write');
  try {
    return await use(opened);
  } finally {
    await opened.close();
  }
}

/** What a command works on: a client, the ledger behind it, and whether decisions reach a live execution at once. */
export interface Target {
  client: SavepointClient;
  ledger: Ledger;
  live: boolean;
  /** The running local engine, when the command reaches one. */
  engine?: EngineFile;
  /** Each agent's directory, its ledger and engine, when the state directory holds several (cli/state.ts openEveryAgent). */
  parts?: AgentDir[];
  /** A link to watch an execution (the AWS console's, on a deployed stack). */
  link: (executionArn: string) => string;
}

/**
 * Runs `use` with a client of the deployed stack (`--stack`), or of the state directory: there,
 * decisions go through the running engine's approval API (the waiting execution resumes), or,
 * with no engine running, are recorded in the ledger and delivered when the run resumes.
 */
export async function withClient<T>(command: string, agentSpec: string | undefined, runId: string | undefined, use: (target: Target) => Promise<T>): Promise<T> {
  const { stack, region } = deployed();
  if (stack) {
    // The AWS clients load only for a deployed stack: a local command does not pay their memory.
    const { describeDeployment, deploymentClient, executionConsoleLink } = await import('../client/aws.js');
    const deployment = await describeDeployment({ stackName: stack, region, agent: agentSpec && !isAgentPath(agentSpec) ? agentSpec : undefined });
    const agent = await agentFor(agentSpec, deployment.agentName, null);
    const { client, ledger, close } = deploymentClient(deployment, agent);
    try {
      return await use({ client, ledger, live: true, link: (arn) => executionConsoleLink(deployment.region, arn) });
    } finally {
      close();
    }
  }
  // The ledger client and the directory's keys load with the ledger (withRuns needs neither while an engine answers).
  const [{ approvalApiDecider, createClient }, ledgerDecisions] = await Promise.all([import('../client/ledger-client.js'), localLedgerDecisions(stateDir())]);
  return withLedger(command, async (opened) => {
    const run = runId ? await opened.ledger.getRun(runId) : undefined;
    // The engine that runs the run's agent, when serve runs several (its module is the run's agent).
    const runEngine = engineRunning(run?.agent, opened) ?? opened.engine;
    const agent = await agentFor(agentSpec, run?.agent, runEngine ?? null);
    const decide = opened.engine ? approvalApiDecider(opened.engine.endpoints.approvals) : undefined;
    // The running engine's Step Functions API, for what starts executions (`migrate`): the run's own state machine.
    const sfn = runEngine && run ? await engineSfnClient(runEngine) : undefined;
    const client = createClient({ ledger: opened.ledger, agent, ledgerDecisions, ...(decide && { decide }), ...(sfn && run && { sfn: sfn.client, stateMachineArn: sfn.stateMachineArnOf(run.executionArn) }) });
    try {
      return await use({ client, ledger: opened.ledger, live: Boolean(opened.engine), engine: opened.engine, ...(opened.parts && { parts: opened.parts }), link: (arn) => arn });
    } finally {
      sfn?.client.destroy();
    }
  });
}

/**
 * Runs `use` with the ledger a command only reads, and the state directory's running engine: the
 * deployed stack's (through `withClient`), or the state directory's opened here with no client —
 * `replay` reads a run and writes nothing, and loads none of the client, approval API or key
 * modules a client needs (issue 38: a replay's process start).
 */
export async function withLedgerOnly<T>(command: string, agentSpec: string | undefined, runId: string | undefined, use: (target: Pick<Target, 'ledger' | 'engine' | 'parts'>) => Promise<T>): Promise<T> {
  if (deployed().stack) return withClient(command, agentSpec, runId, ({ ledger, engine }) => use({ ledger, ...(engine && { engine }) }));
  return withLedger(command, ({ ledger, engine, parts }) => use({ ledger, ...(engine && { engine }), ...(parts && { parts }) }));
}

/**
 * Who decides an approval where no engine answers: this machine's user, recorded in the ledger of
 * `dir` and signed with its decision key, for the run to take when it resumes (the local approval
 * API records the same user while an engine runs).
 */
export async function localLedgerDecisions(dir: string) {
  const [{ localUser }, { localApprovalKeys }] = await Promise.all([import('../local/services/approval-api.js'), import('../local/state/approval-keys.js')]);
  return { identity: { id: localUser(), via: 'cli' as const }, decisionMac: localApprovalKeys(dir).decisions, policy: { separationOfDuties: false } };
}

/** The commands that write nothing, and how they open an embedded ledger (cli/state.ts `LedgerAccess`); the others open it to write. */
const LEDGER_ACCESS: Readonly<Record<string, LedgerAccess>> = { status: 'read', runs: 'read', approvals: 'read', verify: 'verify', replay: 'read', trace: 'read' };

/**
 * The commands that reach every agent's ledger of the state directory (`serve --agent a --agent b`
 * keeps one per agent): they see each agent's runs, `kill --all` stops every agent's, a decision,
 * a fork or a migration reaches the ledger (and engine) that holds its run, `prune` prunes each
 * ledger and `effects` lists and settles each one's effects. The others (`run`, `resume`) work on
 * one directory's: the state directory's, or the one whose ledger holds the run resumed (runDirOf).
 */
const EVERY_AGENT: ReadonlySet<string> = new Set(['status', 'runs', 'approvals', 'verify', 'trace', 'replay', 'kill', 'breakers', 'prune', 'effects', 'migrate', 'fork', 'approve', 'reject']);

/** The running engine's Step Functions client; the SDK loads only when a command reaches an engine. */
async function engineSfnClient(engine: EngineFile) {
  const [{ SFNClient }, { stateMachineArnOf }] = await Promise.all([import('@aws-sdk/client-sfn'), import('../lambdas/adapters/sfn.js')]);
  return { client: new SFNClient({ ...localAwsConfig, endpoint: engine.endpoints.sfn }), stateMachineArnOf };
}

/**
 * The figures of an execution that `savepoint serve` drove (`run --json`'s `execution`, the report's
 * "Lambda executions" line), as a local run has them of its own: its status and per-state summary,
 * read through the engine's Step Functions API (DescribeExecution, GetExecutionHistory paged). The
 * run's end is recorded a state before its execution ends, so a RUNNING execution is read again
 * until it has ended, for at most `patienceMs`.
 */
export async function servedExecutionFigures(engine: EngineFile, executionArn: string, patienceMs = 10_000): Promise<ExecutionFigures> {
  const [{ DescribeExecutionCommand, GetExecutionHistoryCommand }, { summarizeHistory }, { executionFigures }] = await Promise.all([
    import('@aws-sdk/client-sfn'),
    import('../local/engine/history.js'),
    import('./format.js'),
  ]);
  const { client } = await engineSfnClient(engine);
  try {
    const until = Date.now() + patienceMs;
    let { status } = await client.send(new DescribeExecutionCommand({ executionArn }));
    while (status === 'RUNNING' && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      ({ status } = await client.send(new DescribeExecutionCommand({ executionArn })));
    }
    const events: HistoryEvent[] = [];
    for (let nextToken: string | undefined; ; ) {
      const page = await client.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000, includeExecutionData: false, ...(nextToken && { nextToken }) }));
      events.push(...((page.events ?? []) as HistoryEvent[]));
      if (!(nextToken = page.nextToken)) break;
    }
    return executionFigures(executionArn, status ?? 'UNKNOWN', summarizeHistory(events));
  } finally {
    client.destroy();
  }
}

/** What a command that reads runs or decides approvals works on: the public client, and what serves it. */
export interface RunsTarget {
  /** The client of the runs API (client/connect.ts): the one command path, whatever answers it. */
  client: RunsClient;
  /** Whether an engine (or the stack) answers: a decision then reaches a waiting execution at once. */
  live: boolean;
  /** The engines running on the state directory and on its agents' directories (serve with several agents), each with its directory. */
  engines: { dir: string; engine: EngineFile }[];
  /** A link to watch an execution (the AWS console's, on a deployed stack). */
  link: (executionArn: string) => string;
}

/**
 * Runs `use` with the public client (client/connect.ts) of the state directory: through the
 * runs API a running engine publishes there (`serve`, or `savepoint run` while it runs: no ledger
 * is opened here), else through the same API answered in this process over the directory
 * (local/services/state-dir-api.ts: each request opens the ledger, to read unless it decides);
 * or, with `--stack`, the deployed stack's runs API (`connect({ stack, region })`).
 * `agentSpec`: the agent a run's report is summarized by (default: the run's own).
 */
export async function withRuns<T>(command: string, agentSpec: string | undefined, use: (target: RunsTarget) => Promise<T>): Promise<T> {
  const { stack, region } = deployed();
  // The public client loads with the commands that read through it (`replay` and the ledger's own commands do not).
  const { connect, runsClient } = await import('../client/index.js');
  // A deployed stack's runs API, signed with the caller's AWS credentials (the SDK loads only then).
  if (stack) {
    const { executionLinkOf } = await import('../client/console-link.js');
    return use({ client: await connect({ stack, ...(region && { region }), ...(agentSpec && !isAgentPath(agentSpec) && { agent: agentSpec }) }), live: true, engines: [], link: executionLinkOf });
  }
  const dir = stateDir();
  const dirs = [dir, ...agentDirsOf(dir).map((part) => part.dir)];
  const engines: RunsTarget['engines'] = [];
  for (const at of dirs) {
    const engine = await runningEngine(at);
    if (engine) engines.push({ dir: at, engine });
  }
  const served = engines[0]?.dir === dir && engines[0].engine.endpoints['runs'] !== undefined;
  const link = (arn: string) => arn;
  if (served) return use({ client: await connect({ stateDir: dir }), live: true, engines, link });
  const [{ stateDirApi, IN_PROCESS_ORIGIN }, { localApprovalPolicy }, { localApprovalKeys }] = await Promise.all([
    import('../local/services/state-dir-api.js'),
    import('../local/runtime/approvals.js'),
    import('../local/state/approval-keys.js'),
  ]);
  // An agent the user named that does not load fails the command here, with its own message,
  // rather than inside the API below (an answer of 500, "internal error").
  if (agentSpec !== undefined) await agentFor(agentSpec, undefined, null);
  const fetch = stateDirApi({
    open: (access) => openEveryAgent(dir, command, access),
    agentOf: reportAgent(agentSpec),
    decisionMac: localApprovalKeys(dir).decisions,
    policy: localApprovalPolicy({}),
    engineHint: 'start one with `savepoint serve --agent <name|path>`',
  });
  return use({ client: runsClient({ base: `${IN_PROCESS_ORIGIN}/v1`, fetch }), live: false, engines, link });
}

/**
 * The agent whose own summary a report of the state directory adds (agentFor). An agent the user
 * did not name that is here but does not load — its file no longer compiles, esbuild is not
 * installed — leaves the report without its summary, said once on stderr: reading the ledger
 * needs no agent's code, and the user did not ask for this one.
 */
function reportAgent(explicit: string | undefined): (runAgent: string) => Promise<AgentDefinition | undefined> {
  const told = new Set<string>();
  return async (runAgent) => {
    try {
      return await agentFor(explicit, runAgent, null);
    } catch (error) {
      if (explicit !== undefined) throw error;
      if (!told.has(runAgent)) err(`savepoint: agent ${runAgent} does not load here, so the report goes without its own summary: ${describe(error)}`);
      told.add(runAgent);
      return undefined;
    }
  };
}

/** Where the ledger is, for messages: the stack, or the state directory. */
export const where = () => {
  const { stack } = deployed();
  return stack ? `stack ${stack}` : stateDir();
};


/**
 * The runs API of the `savepoint serve` that owns the state directory, as the public client
 * reaches it (client/connect.ts): what `run` and `kill` use while serve drives the runs, so the
 * run is serve's to drive and the kill is recorded by its API. Undefined when no serve owns it.
 */
export async function servingEngine(dir: string): Promise<{ client: RunsClient; engine: EngineFile } | undefined> {
  // No lock, no serve: what the command finds wrong with the directory is for the command to say.
  if (!existsSync(lockFilePath(dir))) return undefined;
  const owner = await liveOwner(dir);
  if (owner?.command !== 'serve') return undefined;
  const engine = await runningEngine(dir);
  const runs = engine?.endpoints['runs'];
  if (!engine || !runs) return undefined;
  const { runsClient } = await import('../client/index.js');
  return { client: runsClient({ base: runs.replace(/\/runs$/, '') }), engine };
}

/** Of the engines a command has open (the state directory's, and each agent's when serve runs several), the one that runs `agent`. */
export function engineRunning(agent: string | undefined, opened: { engine?: EngineFile | null; parts?: readonly AgentDir[] }): EngineFile | undefined {
  if (agent === undefined) return undefined;
  return [opened.engine, ...(opened.parts ?? []).map((part) => part.engine)].find((engine) => engine?.agent?.name === agent) ?? undefined;
}

/**
 * The engine of the `savepoint serve` owning `dir` that drives runs of `agent`: `engine` (the
 * directory's own), or, when serve runs several agents, that agent's in agents/<name>/ — each
 * agent's executions are on its own engine's Step Functions API, which the other's does not know.
 */
export async function servedEngineOf(dir: string, engine: EngineFile, agent: string): Promise<EngineFile> {
  if (engine.agent?.name === agent) return engine;
  return (await runningEngine(agentDir(dir, agent))) ?? engine;
}

/** The directory of the agent whose ledger holds the run, when the state directory keeps several (cli/state.ts openEveryAgent). */
export async function holderDir(parts: readonly AgentDir[] | undefined, runId: string): Promise<string | undefined> {
  for (const part of parts ?? []) if (await part.ledger.getRun(runId)) return part.dir;
  return undefined;
}

/**
 * Where `run`/`resume` with no engine running drives `runId`: the directory whose ledger holds it.
 * A state directory `serve --agent a --agent b` kept holds b's runs in agents/b/ (its ledger, world
 * and journals), which the state directory's own ledger does not know. Undefined when it keeps no
 * agent's directory, or no ledger of it holds the run (then the state directory's own says so).
 */
export async function runDirOf(dir: string, runId: string, command: string): Promise<string | undefined> {
  if (agentDirsOf(dir).length === 0) return undefined;
  const opened = await openEveryAgent(dir, command, 'read');
  try {
    return await holderDir(opened.parts, runId);
  } finally {
    await opened.close();
  }
}

/** What a command has open: the ledger, and each agent's when the state directory holds several (cli/state.ts openEveryAgent). */
export type OpenLedgers = Pick<Target, 'ledger' | 'parts'>;

/**
 * The prune records of the ledgers at hand: each agent's — a state directory `serve` of several
 * agents keeps has one ledger per agent, and their joined view (local/state/agent-ledgers.ts)
 * keeps no prune records of its own — else the one ledger's.
 */
export async function pruneRecordsIn({ ledger, parts }: OpenLedgers): Promise<PruneRecord[]> {
  const { pruneRecordsOf } = await import('../lambdas/ledger/storage-ledger.js');
  const each = await Promise.all((parts ?? [{ ledger }]).map(async (part) => (await pruneRecordsOf(part.ledger)?.prunes(() => undefined)) ?? []));
  return each.flat();
}

/**
 * The error of a command given a run id its ledger does not hold. A run `savepoint prune` removed
 * is named as such, with the prune's sealed record (which `savepoint verify <runId>` checks): "no
 * run" alone reads as a lost run. `opened`: the ledgers at hand; without them (`status` reads through
 * the runs API), they are opened to read. `place`: where the ledger is, as the message names it.
 * @default the command line's state directory or stack
 */
export async function noRunError(runId: string, opened?: OpenLedgers, place = where()): Promise<UsageError> {
  // An id no run can have ('', '.', 'a b') is said as the client refuses it, naming runId: not as a
  // run that is not there ("no run  in …").
  const { checkRunId } = await import('../client/connect.js');
  try {
    checkRunId(runId);
  } catch (error) {
    return new UsageError((error as Error).message);
  }
  // Only to say more than "no run": a ledger that cannot be opened now leaves the answer as it was.
  const prunes = opened ? await pruneRecordsIn(opened) : await withLedgerOnly('status', undefined, runId, pruneRecordsIn).catch(() => []);
  const prune = prunes.find((record) => record.runIds.includes(runId));
  return new UsageError(`no run ${runId} in ${place}${prune ? `: it was ${formatPrune(prune)} (\`${nextCommand(`verify ${runId}`)}\` checks that record)` : ''}`);
}

/** A prune record, as a line (`verify`, and the error of a run it removed). */
export function formatPrune(prune: PruneRecord): string {
  return `pruned at ${prune.prunedAt}: ${counted(prune.runIds.length, 'run')} that finished before ${prune.finishedBefore} (${counted(prune.records, 'record')}, ${prune.digest}), sealed`;
}
