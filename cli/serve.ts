import { appendFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { toolSecretsFromEnv } from '../lambdas/tools/secrets.js';
import { formatAmount } from '../lambdas/shared/money.js';
import { assertRunsLocally, loadAgent } from '../local/runtime/agents.js';
import { historyLog } from '../local/engine/history-log.js';
import { startLocalStack } from '../local/runtime/local-stack.js';
import { consoleProxy } from '../console/proxy.js';
import { startFrontDoor } from './serve-front.js';
import type { AgentDefinition } from '../lambdas/define.js';
import type { LocalStackOptions } from '../local/runtime/local-stack.js';
import type { CfnTemplateJson } from '../local/template/asl.js';
import type { PriceOverrides } from '../lambdas/models/prices.js';
import type { LocalFleetBudget } from '../local/runtime/fleet-budget.js';
import { startLocalConsole } from '../console/local.js';
import { amountOption, describe as describeError, listenRefused, parseOptions, UsageError, wholeNumberOption } from './errors.js';
import { terminalSafe } from './format.js';
import { checkStateDir, ownStateDir } from './owner.js';
import { checkTracingEnv } from './tracing-env.js';
import { fleetBudgetFile, pricesFile, templateFile } from './run.js';
import { watchStopSignals, type StopSignal, runCleanups } from './signals.js';
import { agentDir, chooseLedger, publishEngine, rememberAgentModule, worldDataOf } from './state.js';
import { commandHint } from './command-hint.js';

export const ServeOptions = z.object({
  /** The agents to serve (`--agent`, repeated): each with an engine and a ledger of its own (see `serveCommand`). */
  agent: z.array(z.string().min(1)).min(1, 'name the agent to serve: --agent <name|path> (or $SAVEPOINT_AGENT)'),
  stateDir: z.string().min(1),
  /** The loopback port of the runs API, the approval API and the console. @default any free port */
  port: wholeNumberOption(z.number().max(65535)).optional(),
  ledger: z.enum(['embedded', 'dynalite']).optional(),
  durability: z.enum(['sync', 'async']).optional(),
  worldData: z.string().min(1).optional(),
  template: z.string().min(1).optional(),
  prices: z.string().min(1).optional(),
  fleetBudget: z.string().min(1).optional(),
  failRate: amountOption(z.number().min(0).max(0.5)).default(0),
  seed: wholeNumberOption().default(1),
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
 * approval API (`/v1/approvals`) and the console (`/`, its own session token) — for several agents
 * through a front door to their engines (cli/serve-front.ts). It drives every run
 * it is given to its end — a run it started, or one it resumed — and keeps serving after each,
 * until a stop signal: then it drains (no new step starts, the steps in flight finish and are
 * saved) and ends; the runs not finished resume when it starts again.
 *
 * Approvals wait for a decision through the API (`savepoint approve`, the client's `decide`, the
 * console, a signed link) until their deadline; nobody is asked at a terminal.
 */
export async function serveCommand(raw: Record<string, unknown>, io: { out: (line: string) => void; err: (line: string) => void }): Promise<Served> {
  const options = parseOptions(ServeOptions, raw);
  if (new Set(options.agent).size !== options.agent.length) throw new UsageError(`--agent: each agent once (asked for ${options.agent.join(', ')})`);
  const prices = options.prices === undefined ? undefined : pricesFile(options.prices);
  const fleetBudget = options.fleetBudget === undefined ? undefined : fleetBudgetFile(options.fleetBudget);
  const stateDir = resolve(options.stateDir);
  const loaded: Awaited<ReturnType<typeof loadAgent>>[] = [];
  for (const spec of options.agent) loaded.push(await loadAgent(spec));
  const agentNames = loaded.map(({ agent }) => agent.name);
  if (new Set(agentNames).size !== agentNames.length) throw new UsageError(`--agent: two modules define the same agent (${agentNames.join(', ')})`);
  // Every agent runs here, or none starts (its state directory is not made).
  for (const { agent } of loaded) assertRunsLocally(agent);
  // The first agent's world serves --world-data and runs --template (the others their own).
  if (options.worldData) loaded[0]!.agent.dev?.checkData?.(options.worldData);
  await checkTracingEnv();
  const template = options.template ? templateFile(options.template, loaded[0]!.agent.name) : undefined;

  const signals = watchStopSignals();
  const cleanups: (() => Promise<void> | void)[] = [() => signals.dispose()];
  const cleanUp = () => runCleanups(cleanups);
  try {
    // Each agent has an engine and a ledger of its own (as a DurableAgent of its own has on AWS):
    // the first in the state directory itself, the others in agents/<name>/ beneath it, each
    // owned (locked) by this process and published there, so every command reaches each.
    const several = loaded.length > 1;
    const engines: { name: string; dir: string; stack: Awaited<ReturnType<typeof serveAgent>> }[] = [];
    // The console is served on the API's port: set once both listen.
    let proxy: ((...args: Parameters<ReturnType<typeof consoleProxy>>) => boolean) | undefined;
    const fallback = (...args: Parameters<ReturnType<typeof consoleProxy>>) => proxy?.(...args) ?? false;
    // Several agents: one port in front of their engines (cli/serve-front.ts), listening before
    // they start so that their approval links name it.
    const front = several
      ? await startFrontDoor({ ...(options.port !== undefined && { port: options.port }), fallback }).catch((error: unknown) => {
          throw listenRefused(error, { port: options.port });
        })
      : undefined;
    if (front) cleanups.push(() => front.close());
    for (const [index, { agent, module }] of loaded.entries()) {
      const dir = index === 0 ? stateDir : agentDir(stateDir, agent.name);
      const api = front ? { pageUrl: front.pageUrl } : { ...(options.port !== undefined && { port: options.port }), fallback };
      const stack = await serveAgent({ agent, module, dir, api, io, cleanups, options: { ...options, worldData: index === 0 ? options.worldData : undefined, template: index === 0 ? template : undefined, prices, fleetBudget } });
      engines.push({ name: agent.name, dir, stack });
      // Where each agent was loaded from, in the state directory too: its commands find every agent's module.
      if (dir !== stateDir) rememberAgentModule(stateDir, agent.name, module);
    }
    const first = engines[0]!.stack;
    front?.serve(engines.map(({ name, stack }) => ({ name, runs: stack.endpoints.runs, approvals: stack.endpoints.approvals })));
    const endpoints = front ? { ...first.endpoints, runs: front.runsUrl, approvals: front.approvalsUrl } : first.endpoints;
    // The port the runs API listens on (a URL leaves out http's own, 80).
    const port = Number(new URL(endpoints.runs).port || 80);
    // One console for every agent: their ledgers read as one, decisions through the front door.
    const others = engines.slice(1).map(({ dir, stack }) => ({ stack, stateDir: dir }));
    const consoleServer = await startLocalConsole(first, { stateDir, log: logTo(stateDir), agents: others, approvals: endpoints.approvals });
    cleanups.push(() => consoleServer.close());
    proxy = consoleProxy(consoleServer.origin, () => port);
    const consoleUrl = `http://127.0.0.1:${port}/#token=${consoleServer.token}`;
    for (const { dir, stack } of engines) {
      const published = dir === stateDir ? { ...endpoints, console: consoleUrl } : stack.endpoints;
      cleanups.push(publishEngine(dir, { pid: process.pid, nonce: stack.nonce, startedAt: new Date().toISOString(), agent: { name: stack.agent.name, module: stack.module }, endpoints: published }));
    }
    // The runs a process that died left running, resumed here (the watchdog: local/runtime/watchdog.ts).
    for (const { stack } of engines) {
      const onDamaged = (runId: string, error: Error) => io.out(`savepoint: watchdog: left run ${runId} as it is — ${error.message}`);
      for (const result of await stack.recoverOrphans({ onDamaged })) {
        if (result.action === 'recovered') io.out(`savepoint: resumed run ${result.runId} (recovery ${result.attempt}, execution ${result.executionArn})`);
        else if (result.action !== 'ignored') io.out(`savepoint: gave run ${result.runId} up — ${result.reason}`);
      }
      // Then the batches it left unfinished: their runs started already are found, not started again (local/runtime/batches.ts).
      for (const batchId of stack.batches.resume()) io.out(`savepoint: resumed batch ${batchId}`);
    }
    io.out(`savepoint: runs API ${endpoints.runs.replace(/\/[^/]+\/v1\/runs$/, '/…/v1/runs')} (its address with the credential: ${join(stateDir, 'engine.json')})`);
    if (several) io.out(`savepoint: agents ${engines.map(({ name, dir }) => `${name} (${dir})`).join(', ')}`);
    io.out(`savepoint: console ${consoleUrl}`);
    io.out('savepoint: ready');
    const signal = await signals.received;
    io.out(`savepoint: ${signal} received — draining: the steps in flight finish and are saved; unfinished runs resume when serve starts again`);
    return { signal };
  } finally {
    await cleanUp();
  }
}

const logTo = (dir: string) => (line: string) => appendFileSync(join(dir, 'savepoint.log'), `${new Date().toISOString()} ${line}\n`, { mode: 0o600 });

/** One agent's engine on `dir`: owned (locked) by this process, its stack started; what serve publishes of it. */
async function serveAgent(context: {
  agent: AgentDefinition;
  module: string;
  dir: string;
  api: LocalStackOptions['api'];
  io: { out: (line: string) => void; err: (line: string) => void };
  cleanups: (() => Promise<void> | void)[];
  options: Pick<ServeOptions, 'stateDir' | 'ledger' | 'durability' | 'failRate' | 'seed' | 'worldData'> & { template: CfnTemplateJson | undefined; prices: PriceOverrides | undefined; fleetBudget: LocalFleetBudget | undefined };
}) {
  const { agent, module, dir, io, cleanups, options } = context;
  // As `savepoint run` does, before the lock: a ledger that cannot be had here makes nothing.
  const ledger = chooseLedger(dir, options.ledger);
  // The lock first: a second serve (or run) on this directory stops here, before it opens anything.
  const ownership = await ownStateDir(dir, 'serve');
  io.out(`savepoint: serving agent ${agent.name} from ${dir}…`);
  cleanups.push(() => ownership.release());
  cleanups.push(() => checkStateDir(dir));
  const history = historyLog(join(dir, 'history.jsonl'), { onError: (error) => io.err(`savepoint: warning: history.jsonl: ${describeError(error)}; its events are kept and written when it works again`) });
  cleanups.push(() => history.close());
  const worldData = worldDataOf(dir, options.worldData);
  const stack = await startLocalStack({
    agent,
    ...(options.prices && { prices: options.prices }),
    ...(options.fleetBudget && { fleetBudget: options.fleetBudget }),
    ledger,
    ...(options.durability && { durability: options.durability }),
    worldData: worldData.path,
    stateDir: dir,
    // One S3 for the agents served, as one account's buckets on AWS: a manifest put under the state directory reaches every agent's batch.
    s3Dir: join(resolve(options.stateDir), 's3'),
    failRate: options.failRate,
    seed: options.seed,
    toolSecrets: toolSecretsFromEnv(process.env),
    ...(options.template && { template: options.template }),
    log: logTo(dir),
    ...(context.api && { api: context.api }),
    onApproval: (approval) => {
      const amount = approval.amount ? ` (${formatAmount(approval.amount)})` : '';
      io.out(`savepoint: run ${approval.runId} waits for approval ${approval.approvalId}: ${terminalSafe(approval.summary, { oneLine: true })}${amount} — decide by ${approval.decideBy} (${commandHint(`approve ${approval.approvalId}`, { stateDir: options.stateDir })})`);
    },
  }).catch((error: unknown) => {
    throw listenRefused(error, { port: context.api?.port });
  });
  cleanups.push(() => stack.close());
  checkStateDir(dir);
  stack.engine.on(history);
  worldData.keep();
  rememberAgentModule(dir, agent.name, module);
  for (const note of stack.world.notes ?? []) io.err(`savepoint: warning: ${note}`);
  // Each run's end, as it happens: serve keeps serving after it.
  stack.engine.on((event) => {
    if (!/^Execution(Succeeded|Failed|Aborted|TimedOut)$/.test(event.type)) return;
    io.out(`savepoint: execution ${event.executionArn.split(':').at(-1)} ${event.type.slice('Execution'.length).toLowerCase()}`);
  });
  return Object.assign(stack, { nonce: ownership.nonce, module });
}
