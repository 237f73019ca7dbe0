import { appendFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { toolSecretsFromEnv } from '../lambdas/tools/secrets.js';
import { formatAmount } from '../lambdas/approvals/page.js';
import { parseOrThrow } from '../lambdas/shared/validation.js';
import { loadAgent } from '../local/runtime/agents.js';
import { historyLog } from '../local/engine/history-log.js';
import { startLocalStack } from '../local/runtime/local-stack.js';
import { consoleProxy } from '../console/proxy.js';
import { startLocalConsole } from '../console/local.js';
import { describe as describeError, UsageError } from './errors.js';
import { terminalSafe } from './format.js';
import { checkStateDir, ownStateDir } from './owner.js';
import { pricesFile } from './run.js';
import { watchStopSignals, type StopSignal } from './signals.js';
import { chooseLedger, loadTemplate, publishEngine, rememberAgentModule, worldDataOf } from './state.js';

export const ServeOptions = z.object({
  /** The agents to serve (`--agent`, repeated): one, for now (see `serveCommand`). */
  agent: z.array(z.string().min(1)).min(1, 'name the agent to serve: --agent <name|path> (or $SAVEPOINT_AGENT)'),
  stateDir: z.string().min(1),
  /** The loopback port of the runs API, the approval API and the console. @default any free port */
  port: z.coerce.number().int().min(0).max(65535).optional(),
  ledger: z.enum(['embedded', 'dynalite']).optional(),
  durability: z.enum(['sync', 'async']).optional(),
  worldData: z.string().min(1).optional(),
  template: z.string().min(1).optional(),
  prices: z.string().min(1).optional(),
  failRate: z.coerce.number().min(0).max(0.5).default(0),
  seed: z.coerce.number().int().nonnegative().default(1),
});
export type ServeOptions = z.infer<typeof ServeOptions>;

export interface Served {
  /** The signal that ended it: it drained, and its unfinished runs resume when serve starts again. */
  signal: StopSignal;
}

/**
 * `savepoint serve`: the long-running local engine. It owns the state directory (one engine per
 * directory: a second `serve` or `run` is refused by the lock, cli/owner.ts), resumes the runs a
 * process that died left unfinished, and serves on one loopback port, behind the credential it
 * publishes in engine.json: the runs API (`/v1/runs`: lambdas/adapters/runs-http.ts), the
 * approval API (`/v1/approvals`) and the console (`/`, its own session token). It drives every run
 * it is given to its end — a run it started, or one it resumed — and keeps serving after each,
 * until a stop signal: then it drains (no new step starts, the steps in flight finish and are
 * saved) and ends; the runs not finished resume when it starts again.
 *
 * Approvals wait for a decision through the API (`savepoint approve`, the client's `decide`, the
 * console, a signed link) until their deadline; nobody is asked at a terminal.
 */
export async function serveCommand(raw: Record<string, unknown>, io: { out: (line: string) => void; err: (line: string) => void }): Promise<Served> {
  const options = parseOrThrow(ServeOptions, raw, 'options');
  // One ledger per state directory, and each agent's engine owns the one it opens: several agents
  // on one directory would share a ledger between engines. Until they do, one serve per agent.
  if (options.agent.length > 1) {
    throw new UsageError(`--agent: serve runs one agent per state directory for now (asked for ${options.agent.join(', ')}): start one \`savepoint serve\` per agent, each with its own --state-dir`);
  }
  const prices = options.prices === undefined ? undefined : pricesFile(options.prices);
  const stateDir = resolve(options.stateDir);
  const { agent, module } = await loadAgent(options.agent[0]!);
  const worldData = worldDataOf(stateDir, options.worldData);
  if (options.worldData) agent.dev?.checkData?.(options.worldData);
  const template = options.template ? loadTemplate(options.template) : undefined;
  const logFile = join(stateDir, 'savepoint.log');
  const log = (line: string) => appendFileSync(logFile, `${new Date().toISOString()} ${line}\n`, { mode: 0o600 });

  const signals = watchStopSignals();
  const cleanups: (() => Promise<void> | void)[] = [() => signals.dispose()];
  const cleanUp = async () => {
    const failures: unknown[] = [];
    for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve().then(cleanup).catch((error: unknown) => failures.push(error));
    if (failures.length > 0) throw failures[0];
  };
  try {
    // The lock first: a second serve (or run) on this directory stops here, before it opens anything.
    const ownership = await ownStateDir(stateDir, 'serve');
    io.out(`savepoint: serving agent ${agent.name} from ${stateDir}…`);
    cleanups.push(() => ownership.release());
    cleanups.push(() => checkStateDir(stateDir));
    const history = historyLog(join(stateDir, 'history.jsonl'), { onError: (error) => io.err(`savepoint: warning: history.jsonl: ${describeError(error)}; its events are kept and written when it works again`) });
    cleanups.push(() => history.close());
    // The console is served on the API's port: set once both listen.
    let proxy: ((...args: Parameters<ReturnType<typeof consoleProxy>>) => boolean) | undefined;
    const stack = await startLocalStack({
      agent,
      ...(prices && { prices }),
      ledger: chooseLedger(stateDir, options.ledger),
      ...(options.durability && { durability: options.durability }),
      worldData: worldData.path,
      stateDir,
      failRate: options.failRate,
      seed: options.seed,
      toolSecrets: toolSecretsFromEnv(process.env),
      ...(template && { template }),
      log,
      api: { ...(options.port !== undefined && { port: options.port }), fallback: (request, response) => proxy?.(request, response) ?? false },
      onApproval: (approval) => {
        const amount = approval.amount ? ` (${formatAmount(approval.amount)})` : '';
        io.out(`savepoint: run ${approval.runId} waits for approval ${approval.approvalId}: ${terminalSafe(approval.summary, { oneLine: true })}${amount} — decide by ${approval.decideBy} (savepoint approve ${approval.approvalId})`);
      },
    }).catch((error: unknown) => {
      if ((error as { code?: string }).code === 'EADDRINUSE') throw new UsageError(`--port ${options.port}: the port is in use on 127.0.0.1; pass another, or none for any free port`);
      throw error;
    });
    cleanups.push(() => stack.close());
    checkStateDir(stateDir);
    stack.engine.on(history);
    worldData.keep();
    const port = Number(new URL(stack.endpoints.runs).port);
    const consoleServer = await startLocalConsole(stack, { stateDir, log });
    cleanups.push(() => consoleServer.close());
    proxy = consoleProxy(consoleServer.origin, () => port);
    const consoleUrl = `http://127.0.0.1:${port}/#token=${consoleServer.token}`;
    rememberAgentModule(stateDir, agent.name, module);
    cleanups.push(publishEngine(stateDir, { pid: process.pid, nonce: ownership.nonce, startedAt: new Date().toISOString(), agent: { name: agent.name, module }, endpoints: { ...stack.endpoints, console: consoleUrl } }));
    for (const note of stack.world.notes ?? []) io.err(`savepoint: warning: ${note}`);

    // The runs a process that died left running, resumed here (the watchdog: local/runtime/watchdog.ts).
    const onDamaged = (runId: string, error: Error) => io.out(`savepoint: watchdog: left run ${runId} as it is — ${error.message}`);
    for (const result of await stack.recoverOrphans({ onDamaged })) {
      if (result.action === 'recovered') io.out(`savepoint: resumed run ${result.runId} (recovery ${result.attempt}, execution ${result.executionArn})`);
      else if (result.action !== 'ignored') io.out(`savepoint: gave run ${result.runId} up — ${result.reason}`);
    }
    // Each run's end, as it happens: serve keeps serving after it.
    stack.engine.on((event) => {
      if (!/^Execution(Succeeded|Failed|Aborted|TimedOut)$/.test(event.type)) return;
      io.out(`savepoint: execution ${event.executionArn.split(':').at(-1)} ${event.type.slice('Execution'.length).toLowerCase()}`);
    });
    io.out(`savepoint: runs API ${stack.endpoints.runs.replace(/\/[^/]+\/v1\/runs$/, '/…/v1/runs')} (its address with the credential: ${join(stateDir, 'engine.json')})`);
    io.out(`savepoint: console ${consoleUrl}`);
    io.out('savepoint: ready');
    const signal = await signals.received;
    io.out(`savepoint: ${signal} received — draining: the steps in flight finish and are saved; unfinished runs resume when serve starts again`);
    return { signal };
  } finally {
    await cleanUp();
  }
}
