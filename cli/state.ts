import { copyFileSync, existsSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import type { Ledger } from '../lambdas/ledger/ledger.js';
import { LockHeldError } from '../lambdas/ledger/lock-file.js';
import { SEAL_KEY_FILE } from '../lambdas/ledger/seal-key-file.js';
import { localAwsConfig } from '../local/services/aws-config.js';
import { LEDGER_PATHS, LEDGER_TABLE, type LedgerKind } from '../local/state/ledger-files.js';
import { requirePeer } from '../local/packages/optional-peers.js';
import { PRIVATE_FILE_MODE } from '../local/state/private-state.js';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, UsageError } from './errors.js';
import { terminalSafe } from './format.js';
import { busyMessage, checkStateDirOnce, liveOwner, ownStateDir } from './owner.js';
import { agentDir } from '../local/state/agent-dirs.js';
import { agentModulePath, isAgentPath } from '../local/runtime/agents.js';
import { schemaOnFirstUse } from '../lambdas/shared/on-first-use.js';

export const DEFAULT_STATE_DIR = '.savepoint';

/**
 * While `savepoint run` drives the local engine it owns the state directory (only one process may
 * open the on-disk DynamoDB; cli/owner.ts) and publishes its loopback endpoints here, with the
 * nonce of its lock; other commands reach it through them, or own the state directory themselves
 * while no engine runs. Made on first use (schemaOnFirstUse): read only when the file is there.
 */
const EngineFile = schemaOnFirstUse(() =>
  z.object({
    pid: z.number().int(),
    /** The nonce of the owner's lock: an engine file is obeyed only while that lock is live. */
    nonce: z.string().optional(),
    startedAt: z.string(),
    /** The agent the engine runs (its name, and the module it was loaded from). */
    agent: z.object({ name: z.string(), module: z.string() }).optional(),
    /**
     * `ledger`: the engine's embedded ledger, served over loopback (lambdas/ledger/remote-ledger.ts);
     * `dynamodb`: dynalite's port, for an engine on `--ledger dynalite`. One of the two.
     */
    endpoints: z
      .object({ ledger: z.string().url().optional(), dynamodb: z.string().url().optional(), sfn: z.string(), approvals: z.string(), model: z.string() })
      .catchall(z.string())
      .refine((endpoints) => (endpoints.ledger === undefined) !== (endpoints.dynamodb === undefined), 'names the ledger endpoint or the dynamodb one'),
  }),
);
export type EngineFile = z.infer<ReturnType<typeof EngineFile>>;

const engineFilePath = (stateDir: string) => join(stateDir, 'engine.json');

/** Writes engine.json whole (a reader never sees half of it); the returned function removes it if it is still ours. */
export function publishEngine(stateDir: string, engine: EngineFile): () => void {
  const path = engineFilePath(stateDir);
  const draft = `${path}.${engine.nonce ?? process.pid}`;
  // It holds the endpoints' credentials: readable by the owner only, from its first byte.
  writeFileSync(draft, JSON.stringify(engine, null, 2), { mode: PRIVATE_FILE_MODE });
  renameSync(draft, path);
  return () => {
    const current = readEngineFile(stateDir, { quiet: true });
    if (current?.nonce === engine.nonce) rmSync(path, { force: true });
  };
}

/** engine.json as written; a UsageError naming the file when it is not one (undefined with `quiet`). */
function readEngineFile(stateDir: string, options: { quiet?: boolean } = {}): EngineFile | undefined {
  const path = engineFilePath(stateDir);
  if (!existsSync(path)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    raw = undefined;
  }
  const engine = EngineFile().safeParse(raw);
  if (engine.success) return engine.data;
  if (options.quiet) return undefined;
  throw new UsageError(`${path} is not a valid engine file; remove it if no \`savepoint run\` is running on ${stateDir}`);
}

/**
 * The engine running on this state directory: the one named by engine.json while the lock it was
 * published with is live. Undefined when nobody owns the directory (a stale engine.json or lock,
 * e.g. naming a dead pid or a live unrelated one, is not obeyed). A UsageError when another
 * command owns it, or engine.json is damaged.
 */
export async function runningEngine(stateDir: string): Promise<EngineFile | undefined> {
  checkStateDirOnce(stateDir);
  const engine = readEngineFile(stateDir);
  const owner = await liveOwner(stateDir);
  if (!owner) return undefined;
  if (engine && engine.nonce === owner.nonce) return engine;
  // Owned, but not (yet) by an engine that published its endpoints: a starting run, or a
  // command that has the ledger open.
  throw new UsageError(busyMessage(stateDir, owner));
}

/**
 * The agents a `savepoint serve` owning `stateDir` runs, by name and module: its engine.json's
 * agent, then that of each agent directory it keeps (agents/<name>/engine.json).
 */
export function servedAgents(stateDir: string, engine: EngineFile): ServedAgent[] {
  const others = agentDirsOf(stateDir).map(({ dir }) => readEngineFile(dir, { quiet: true })?.agent);
  return [engine.agent, ...others].filter((agent): agent is ServedAgent => agent !== undefined);
}

/** An agent a running engine runs: its name, and the module it loaded it from. */
export interface ServedAgent {
  name: string;
  module: string;
}

/**
 * The agent of `served` that `--agent <spec>` names: by its name, or, for a module's path
 * (`agentModulePath`), the one loaded from that file (compared as real paths: a symbolic link and
 * its target are one file). Undefined when none is.
 */
export function servedAgentFor(spec: string, served: readonly ServedAgent[]): ServedAgent | undefined {
  if (!isAgentPath(spec)) return served.find((agent) => agent.name === spec);
  const module = realPath(agentModulePath(spec));
  return served.find((agent) => realPath(agent.module) === module);
}

/** The agents an engine runs, as a message names them: `a (/path/a.ts), b (/path/b.ts)`. */
export function servedList(served: readonly ServedAgent[]): string {
  return served.map((agent) => `${agent.name} (${agent.module})`).join(', ');
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * The module each agent that ran here was loaded from, by agent name (`agents.json`): the ledger
 * records a run's agent by name only, and a user's own agent (`--agent ./my-agent.ts`) is not
 * found by name, so `resume <runId>` and `status` find it here.
 */
const agentModulesPath = (stateDir: string) => join(stateDir, 'agents.json');
const AgentModules = schemaOnFirstUse(() => z.record(z.string(), z.string()));

/** Records where `name` was loaded from (a run of it starting here). */
export function rememberAgentModule(stateDir: string, name: string, module: string): void {
  const modules = { ...readAgentModules(stateDir), [name]: module };
  const path = agentModulesPath(stateDir);
  const draft = `${path}.${process.pid}`;
  writeFileSync(draft, JSON.stringify(modules, null, 2), { mode: PRIVATE_FILE_MODE });
  renameSync(draft, path);
}

/** The agents that ran here (their modules remembered), by name. */
export function rememberedAgents(stateDir: string): string[] {
  return Object.keys(readAgentModules(stateDir)).sort();
}

/** The module `name` last ran from here, if it is still there. */
export function rememberedAgentModule(stateDir: string, name: string): string | undefined {
  const module = readAgentModules(stateDir)[name];
  return module !== undefined && existsSync(module) ? module : undefined;
}

function readAgentModules(stateDir: string): Record<string, string> {
  try {
    return AgentModules().parse(JSON.parse(readFileSync(agentModulesPath(stateDir), 'utf8')));
  } catch {
    // None yet, or damaged: nothing remembered (the agent is then named with --agent).
    return {};
  }
}

/** An open ledger: through the running engine's endpoint (`engine`), or owned and opened here. */
export interface OpenLedger {
  ledger: Ledger;
  engine?: EngineFile;
  /** With several agents (openEveryAgent): each agent directory's own ledger and engine, the state directory's first. */
  parts?: AgentDir[];
  close: () => Promise<void>;
}

/** One agent directory of a state directory, open: its ledger, and the engine running on it. */
export interface AgentDir {
  dir: string;
  ledger: Ledger;
  engine?: EngineFile;
}

/** Where `savepoint serve` keeps the engine and ledger of each agent after the first (the first's are the state directory's own). */
export { agentDir };

/**
 * The agents' directories beneath a state directory (agents/<name>/) that hold a ledger, by agent
 * name; or held one: a ledger deleted there is opened, and named, as in the state directory
 * (`kindToOpen`), not passed over with its agent's runs.
 */
export function agentDirsOf(stateDir: string): { agent: string; dir: string }[] {
  const root = join(stateDir, 'agents');
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => ({ agent: entry.name, dir: agentDir(stateDir, entry.name) }))
    .filter(({ dir }) => kindToOpen(dir) !== undefined)
    .sort((a, b) => a.agent.localeCompare(b.agent));
}

/**
 * Where `agent`'s runs, engine and world are kept in a state directory: its agents/<name>/ when a
 * serve of several made one for it (holding a ledger), else the state directory itself.
 */
export function agentHomeOf(stateDir: string, agent: string): string {
  return agentDirsOf(stateDir).find((part) => part.agent === agent)?.dir ?? stateDir;
}

/**
 * The ledgers of every agent of the state directory as one (local/state/agent-ledgers.ts): its own,
 * and each agents/<name>/'s that `savepoint serve --agent a --agent b` keeps, each through its
 * running engine or opened here as `openLedger` opens one. What a command that reads the state
 * directory opens, so that it sees every agent's runs. `engine` is the state directory's (serve's
 * front door, when serve runs).
 */
export async function openEveryAgent(stateDir: string, command = 'status', access: LedgerAccess = 'write'): Promise<OpenLedger> {
  const others = agentDirsOf(stateDir);
  if (others.length === 0) return openLedger(stateDir, command, access);
  const opened: (OpenLedger & { dir: string; agent?: string })[] = [];
  const close = async () => {
    for (const part of opened.splice(0).reverse()) await part.close();
  };
  try {
    opened.push({ ...(await openLedger(stateDir, command, access)), dir: stateDir });
    for (const { agent, dir } of others) opened.push({ ...(await openLedger(dir, command, access)), dir, agent });
  } catch (error) {
    await close();
    throw error;
  }
  const parts = opened.map(({ dir, ledger, engine }) => ({ dir, ledger, ...(engine && { engine }) }));
  const { agentLedgers } = await import('../local/state/agent-ledgers.js');
  return {
    ledger: agentLedgers(opened.map(({ ledger, agent }) => ({ ledger, ...(agent && { agents: [agent] }) }))),
    ...(opened[0]!.engine && { engine: opened[0]!.engine }),
    parts,
    close,
  };
}

/**
 * The DynamoDB ledger's modules, loaded only for a dynalite state directory: the SDK client and
 * the emulator cost ~40 MB of memory that an embedded run has no use for.
 */
async function dynamoModules() {
  const [{ DynamoDBClient }, { DynamoDbLedger }, { startDynamo }, { localLedgerSealer }] = await Promise.all([
    import('@aws-sdk/client-dynamodb'),
    import('../lambdas/ledger/dynamodb-ledger.js'),
    import('../local/services/dynamodb.js'),
    import('../local/state/approval-keys.js'),
  ]);
  return { DynamoDBClient, DynamoDbLedger, startDynamo, localLedgerSealer };
}

/**
 * The kind of ledger to open in a state directory: the one it holds, else embedded when its head or
 * seal key is there without it (it was deleted: the embedded ledger's open says so), else none.
 * What a command asks before it says a directory holds no ledger: one whose ledger was deleted is
 * damaged, not a mistyped --state-dir. Synchronous, and on a command's start (`agentDirsOf`): the
 * seal key's file name comes from a module of its own, not the seal's.
 */
export function kindToOpen(stateDir: string): LedgerKind | undefined {
  const held = ledgerKindOf(stateDir);
  if (held) return held;
  return existsSync(join(stateDir, 'ledger.head')) || existsSync(join(stateDir, SEAL_KEY_FILE)) ? 'embedded' : undefined;
}

/**
 * How a command opens an embedded ledger: `write` whole (EmbeddedLedger.open); `read` from its
 * index, read-only, in time and memory flat in the number of runs it holds; `verify` read-only
 * too, after streaming the whole log, every line's chain and seal checked (EmbeddedLedger.openToRead).
 */
export type LedgerAccess = 'write' | 'read' | 'verify';

/** The state directory's ledger: through the running engine's endpoint, or opened directly (an embedded one as `access` says). */
export async function openLedger(stateDir: string, command = 'status', access: LedgerAccess = 'write'): Promise<OpenLedger> {
  const engine = await runningEngine(stateDir);
  if (engine?.endpoints.ledger) {
    // The engine's ledger over loopback: its client (and node:http) load only when an engine serves one.
    const { RemoteLedger } = await import('../lambdas/ledger/remote-ledger.js');
    const remote = RemoteLedger.connect(engine.endpoints.ledger);
    return { ledger: remote, engine, close: async () => remote.close() };
  }
  if (engine?.endpoints.dynamodb) {
    const { DynamoDBClient, DynamoDbLedger, localLedgerSealer } = await dynamoModules();
    const client = new DynamoDBClient({ ...localAwsConfig, endpoint: engine.endpoints.dynamodb });
    return { ledger: new DynamoDbLedger(client, LEDGER_TABLE, localLedgerSealer(stateDir)), engine, close: async () => client.destroy() };
  }
  const kind = kindToOpen(stateDir);
  if (!kind) throw noLedger(stateDir);
  // A command that only reads an embedded ledger does not take the state directory: the ledger's
  // own lock (ledger.lock, held from its open to its close: EmbeddedLedger.openToRead) keeps every
  // writer out while it reads (a `run` or `serve` started meanwhile is refused, exit 2, naming the
  // reading command as the directory's lock did: ledgerInUse), and it reads nothing else of the
  // directory (runningEngine above checked that nothing owns it, and that it is private). Taking
  // the directory as well cost each reading command ~6 ms of CPU, its lock's loopback server
  // (cli/owner.ts): `replay`, `status` (issue 38).
  const ownership = kind === 'embedded' && access !== 'write' ? undefined : await ownStateDir(stateDir, command);
  if (kind === 'embedded') {
    try {
      // The embedded ledger's module loads with an embedded ledger: `status`, `runs` and `approvals`
      // answered by a running engine open none, and start without it (issue 38: 200 ms), as does a dynalite directory's command.
      const { EmbeddedLedger } = await import('../lambdas/ledger/embedded-ledger.js');
      // The embedded ledger takes its own lock too (ledger.lock), naming the command: a second
      // opener is refused, and says by which (ledgerInUse).
      const onNote = (note: string) => process.stderr.write(`savepoint: warning: ${terminalSafe(note)}\n`);
      const embedded = access === 'write' ? EmbeddedLedger.open({ dir: stateDir, command, onNote }) : EmbeddedLedger.openToRead({ dir: stateDir, command, onNote, verify: access === 'verify' });
      return {
        ledger: embedded,
        close: async () => {
          embedded.close();
          await ownership?.release();
        },
      };
    } catch (error) {
      await ownership?.release();
      if (error instanceof LockHeldError) throw await ledgerInUse(error, command);
      // The ledger's lock is a file made beside it, by a reading command too: a directory it cannot
      // be made in (a read-only mount, a backup) is said as the state directory's own lock says it.
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') throw new UsageError(`cannot write to the state directory ${stateDir}: ${describe(error)} (every command takes its ledger's lock, ledger.lock, a command that only reads too: copy the directory somewhere writable to read it)`);
      throw error;
    }
  }
  try {
    const { DynamoDbLedger, startDynamo, localLedgerSealer } = await dynamoModules();
    const dynamo = await startDynamo({ path: join(stateDir, LEDGER_PATHS.dynalite) });
    const close = async () => {
      await dynamo.close();
      await ownership?.release();
    };
    if (!(await hasTable(dynamo.client))) {
      await close();
      throw noLedger(stateDir);
    }
    return { ledger: new DynamoDbLedger(dynamo.client, LEDGER_TABLE, localLedgerSealer(stateDir)), close };
  } catch (error) {
    await ownership?.release();
    throw error;
  }
}

/**
 * What a command is told when another process has the ledger open, as the state directory's lock
 * would tell it (busyMessage), exit 2. The commands that only read an embedded ledger take no lock
 * of the directory (openLedger), so the ledger's own lock is what keeps a `run` out while one reads
 * (and a reader out while a run starts): it names the reading command. A lock that names none (a
 * run's: the run holds the directory) is named by the directory's live owner when that is its holder.
 */
export async function ledgerInUse(error: LockHeldError, asking?: string): Promise<UsageError> {
  const dir = dirname(error.path);
  const { pid, command, startedAt } = error.holder;
  if (command !== undefined) return new UsageError(busyMessage(dir, { pid, command, ...(startedAt !== undefined && { startedAt }) }, asking));
  const owner = await liveOwner(dir).catch(() => undefined);
  if (owner?.pid === pid) return new UsageError(busyMessage(dir, owner, asking));
  return new UsageError(`the state directory ${dir} is in use by process ${pid}, which has its ledger open: try again when it has finished`);
}

/**
 * A ledger directory without its table is one whose first run stopped while it was set up (a
 * kill -9 during startup): it holds no run, and the next `savepoint run` creates the table.
 */
async function hasTable(client: DynamoDBClient): Promise<boolean> {
  const { DescribeTableCommand, ResourceNotFoundException } = await import('@aws-sdk/client-dynamodb');
  try {
    await client.send(new DescribeTableCommand({ TableName: LEDGER_TABLE }));
    return true;
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return false;
    throw error;
  }
}

/**
 * The kind of ledger a state directory holds: `ledger.jsonl` (embedded) or `ledger/` (dynalite);
 * undefined when none. Both at once is refused: which runs are meant would be a guess.
 */
export function ledgerKindOf(stateDir: string): LedgerKind | undefined {
  const kinds = (Object.keys(LEDGER_PATHS) as LedgerKind[]).filter((kind) => existsSync(join(stateDir, LEDGER_PATHS[kind])));
  if (kinds.length > 1) {
    throw new UsageError(
      `the state directory ${stateDir} holds two ledgers (${LEDGER_PATHS.embedded} and ${LEDGER_PATHS.dynalite}/); keep the one you mean and move the other away`,
    );
  }
  return kinds[0];
}

/**
 * The ledger `savepoint run` uses: the one asked for, else the one the state directory holds,
 * else embedded. Asking for another kind than the directory holds is refused (its runs would vanish from view).
 */
export function chooseLedger(stateDir: string | undefined, asked: LedgerKind | undefined): LedgerKind {
  const held = stateDir === undefined ? undefined : ledgerKindOf(stateDir);
  if (asked && held && asked !== held) {
    const a = (kind: LedgerKind) => `${kind === 'embedded' ? 'an' : 'a'} ${kind}`;
    throw new UsageError(`the state directory ${stateDir} holds ${a(held)} ledger: pass --ledger ${held}, or another --state-dir for ${a(asked)} one`);
  }
  const kind = asked ?? held ?? 'embedded';
  // Before the state directory is made: the emulator is loaded only once the stack starts.
  if (kind === 'dynalite') requirePeer('dynalite');
  return kind;
}

// A state directory with no ledger is the command line's mistake (a wrong --state-dir, or no run yet): exit 2.
const noLedger = (stateDir: string) => new UsageError(`no ledger in ${resolve(stateDir)}: run \`savepoint run\` first (or pass --state-dir)`);

/**
 * The data file the agent's simulated world serves (e.g. the refund reconciler's day) is part of a
 * state directory's outside world, like the world's journal next to it: a run keeps a copy there,
 * and a resume without `--world-data` serves the same data again.
 */
export function worldDataOf(stateDir: string | undefined, explicit: string | undefined): { path: string | undefined; keep: () => void } {
  const kept = stateDir && join(stateDir, 'world-data.json');
  const path = explicit ?? (kept && existsSync(kept) ? kept : undefined);
  return { path, keep: () => kept && path && path !== kept && copyFileSync(path, kept) };
}
