import type { Command } from 'commander';
import { Option } from 'commander';
import { defaultFromEnv, engineOptions } from '../options.js';
import { parseOptions, UsageError } from '../errors.js';
import { deployed, err, nextCommand, out, printJson, printReport, stateDir } from '../program.js';
import { exitCodeOfSignal, signalCame, watchStopSignals, type StopSignals } from '../signals.js';
import type { Run, RunsClient } from '../../client/index.js';
import { noRunError, runDirOf, servedEngineOf, servedExecutionFigures, servingEngine, withClient } from '../target.js';
import { servedAgentFor, servedAgents, servedList, type EngineFile } from '../state.js';
import { agentModulePath, isAgentPath } from '../../local/runtime/agents.js';
import type { ForkRequest } from '../../lambdas/runs/fork.js';
import { MODEL_PROVIDERS } from '../../lambdas/models/providers.js';
import { lifecycleOf, TERMINAL_LIFECYCLES } from '../../lambdas/runs/lifecycle.js';

/**
 * The first variable of each provider the environment reaches (the simulator is always local),
 * the providers with keys first: `ANTHROPIC_API_KEY, OPENAI_API_KEY, AWS_REGION`.
 */
function providerVariables(): string {
  const real = MODEL_PROVIDERS.descriptors.filter((descriptor) => descriptor.name !== 'sim');
  return [...real.filter((d) => d.secret), ...real.filter((d) => !d.secret)].map((descriptor) => descriptor.env[0]).join(', ');
}

/** `savepoint run`: an agent on the local engine, or a run started on a deployed stack (`--stack`). */
export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description("run an agent on the local engine (resumes the run if it exists)")
    .addOption(engineOptions.agent())
    .option('--input <json|file>', "the run's input, checked by the agent's input schema (default: what the agent's simulated world serves)")
    .option('--run-id <id>', "the run id, the idempotency key of the whole run (default: the agent's, from the input)")
    .option('--model <provider:model>', `the run's model instead of the agent's, e.g. anthropic:claude-sonnet-4-6 (keys and endpoints from ${providerVariables()}, …)`)
    .addOption(engineOptions.failRate())
    .addOption(engineOptions.seed())
    .addOption(engineOptions.approve())
    .addOption(defaultFromEnv(new Option('--approval-timeout <seconds>', 'escalate approvals not decided within this time (default: $SAVEPOINT_APPROVAL_TIMEOUT, else 1 unattended, 300 in a terminal)'), 'SAVEPOINT_APPROVAL_TIMEOUT'))
    .option('--max-steps <n>', 'step budget: model turns + tool calls (default 400)')
    .option('--max-tokens <n>', 'token budget, input + output over the run (default 600000)')
    .option('--max-tokens-per-turn <n>', 'max_tokens of every model call (default 2048)')
    .option('--max-dollars <d>', 'dollar budget of the model calls (default 5)')
    .option('--max-wall-seconds <s>', 'wall-clock budget since the run first started (default 14400)')
    .addOption(new Option('--on-budget-exceeded <mode>', 'stop, or ask a person to extend the budget (default stop)').choices(['stop', 'ask']))
    .option('--memory', 'keep nothing: in-memory ledger and simulated world', false)
    .addOption(engineOptions.ledger())
    .addOption(engineOptions.durability())
    .addOption(engineOptions.worldData())
    .addOption(engineOptions.json())
    .option('--force', 'resume a run even though the code changed since it started', false)
    .addOption(engineOptions.crashAt())
    .addOption(engineOptions.crashRate())
    .addOption(engineOptions.crashSeed())
    .addOption(engineOptions.maxRecoveries())
    .addOption(engineOptions.prices())
    .addOption(engineOptions.fleetBudget())
    .addOption(engineOptions.template())
    .addOption(engineOptions.wait())
    .action(runAndReport);
}

/**
 * What `run` / `resume` need (the local engine, the Step Functions interpreter, the providers),
 * loaded only by them: every other command starts without it.
 */
const runModule = () => import('../run.js');

export async function runAndReport(options: Record<string, unknown>) {
  if (deployed().stack) return startOnStack(options);
  // With --memory the run keeps nothing and owns nothing: it never goes to a serve.
  // A fork runs in the directory of its parent's agent (cli/commands/fork.ts), else the state directory.
  const dir = (options['stateDir'] as string | undefined) ?? stateDir();
  const serving = options['memory'] ? undefined : await servingEngine(dir);
  if (serving) return runOnServe(options, dir, serving);
  // A run of an agent a serve of several kept beneath the state directory resumes in its agent's directory, on its ledger.
  const runDir = options['resume'] && !options['memory'] ? ((await runDirOf(dir, options['runId'] as string, 'resume')) ?? dir) : dir;
  const { exitCodeOf, runCommand } = await runModule();
  const outcome = await runCommand({ ...options, stateDir: runDir }, { out, err, interactive: Boolean(process.stdin.isTTY) });
  if (options['json']) printJson({ ...outcome.report, lifecycle: lifecycleOf(outcome.report.status, outcome.report.approvals.pending, outcome.report.error), execution: outcome.execution });
  else printReport(outcome.report, outcome.execution, options['approve']);
  // Stopped by a signal: saved, not finished — the shell's 128 + signal, like the default handler.
  process.exitCode = outcome.signal ? exitCodeOfSignal(outcome.signal) : exitCodeOf(outcome.report);
}

/**
 * `run` / `resume` on a deployed stack: starts (or resumes) the run through the Step Functions API
 * and says where to watch it; with `--wait`, waits for it and reports like the local run.
 */
async function startOnStack(options: Record<string, unknown>) {
  // A deployed stack prices its runs itself: the construct's `prices` (a run cannot bring its own).
  if (options['prices'] !== undefined) throw new UsageError(`--prices: a run on stack ${deployed().stack} is priced by the stack (the construct's \`prices\` prop), not by the command line`);
  if (options['fleetBudget'] !== undefined) throw new UsageError(`--fleet-budget: a stack's fleet budget is its deployment's (the construct's \`fleetBudget\` prop), not a run's`);
  const runId = options['runId'] as string | undefined;
  const { exitCodeOf, runInput } = await runModule();
  await withClient('run', options['agent'] as string | undefined, runId, async ({ client, ledger, parts, link }) => {
    const existing = runId ? await ledger.getRun(runId) : undefined;
    if (options['resume'] && !existing) throw await noRunError(runId!, { ledger, parts });
    const input = existing ? existing.input : runInput(options['input'] as string | undefined, undefined, 'of this stack');
    const started = await client.start({ input, ...(runId && { runId }), ...(options['force'] ? { force: true } : {}) });
    const where = { runId: started.runId, executionArn: started.executionArn, execution: link(started.executionArn) };
    if (!options['wait']) return options['json'] ? printJson(where) : out(`run ${where.runId} started: ${where.execution}`);
    const progress = options['json'] ? err : out;
    // Caught before the line that says it waits: Ctrl-C stops the waiting, not the run.
    const signals = watchStopSignals();
    progress(`run ${where.runId} started: ${where.execution}; waiting for it (Ctrl-C stops waiting, not the run)…`);
    const view = await waitUnlessStopped(client, started.runId, signals, { who: `stack ${deployed().stack}`, say: progress });
    if (!view) return;
    if (options['json']) printJson({ ...view.report, lifecycle: view.lifecycle });
    else printReport(view.report);
    process.exitCode = exitCodeOf(view.report);
  });
}

/**
 * The options of `run`, `resume` and `fork` (as [key, flag, its default]) that a run handed to
 * `savepoint serve` cannot take: serve's engine runs with its own prices, ledger settings, recovery
 * and failure injection, decides approvals through its approval API, and its runs API takes no
 * `--force`. Each one given is refused before anything starts (exit 2): dropped in silence, a
 * `--crash-at` tested nothing and `--approve approve` left the run waiting a day for a person.
 * (`--world-data` and `--template`, which scripts pass as they started serve, stay serve's own:
 * what serve loaded when it started.)
 */
const NOT_FOR_SERVE: readonly (readonly [key: string, flag: string, unset?: unknown])[] = [
  ['failRate', '--fail-rate', '0'], ['seed', '--seed', '1'], ['crashAt', '--crash-at'], ['crashRate', '--crash-rate', '0'], ['crashSeed', '--crash-seed'],
  ['maxRecoveries', '--max-recoveries'], ['prices', '--prices'], ['fleetBudget', '--fleet-budget'],
  ['durability', '--durability'], ['force', '--force', false],
];

/**
 * What a run handed to `savepoint serve` runs on: the options it cannot take refused (exit 2,
 * before anything starts), and the agent `--agent` names, as serve's runs API names it. A name
 * goes as it is (serve refuses one it does not run); a module's path is the agent serve loaded
 * from that file, and a file serve does not run is refused — sent without its name, the run ran
 * on serve's agent, another code than the one asked for.
 */
export function whatServeTakes(options: Record<string, unknown>, engine: EngineFile): { agent?: string } {
  const owner = `\`savepoint serve\` (pid ${engine.pid}) owns ${stateDir()}`;
  const restart = 'stop it (Ctrl-C or SIGTERM drains it), run this again, then start it again';
  const servedLedger = engine.endpoints.dynamodb ? 'dynalite' : 'embedded';
  const refused = [
    ...NOT_FOR_SERVE.filter(([key, , unset]) => options[key] !== undefined && options[key] !== unset).map(([key, flag]) => (typeof options[key] === 'string' ? `${flag} ${options[key]}` : flag)),
    ...(options['approve'] !== undefined && options['approve'] !== 'wait' ? [`--approve ${options['approve']} (its approvals are decided with \`savepoint approve <id>\` or its console)`] : []),
    ...(options['ledger'] !== undefined && options['ledger'] !== servedLedger ? [`--ledger ${options['ledger']} (it runs the ${servedLedger} ledger)`] : []),
  ];
  if (refused.length > 0) throw new UsageError(`${refused.join('; ')}: ${owner}, and a run it is handed runs with its engine's own settings; drop ${refused.length === 1 ? 'it' : 'them'}, or ${restart}`);
  const spec = options['agent'] as string | undefined;
  if (spec === undefined || !isAgentPath(spec)) return spec === undefined ? {} : { agent: spec };
  const served = servedAgents(stateDir(), engine);
  const match = servedAgentFor(spec, served);
  if (match) return { agent: match.name };
  throw new UsageError(`--agent ${spec}: ${owner} and runs ${servedList(served)}, not ${agentModulePath(spec)}; name ${served.length === 1 ? 'its agent' : 'one of its agents'}, or ${restart} with this one`);
}

/**
 * `run`, `resume` and `fork` while `savepoint serve` owns the state directory: the run (a fork:
 * the run request's `fork`, as the runs API takes it from any application) is handed to serve
 * through its runs API (the public client), which drives it; this command waits for it and reports
 * as a local run does. Ctrl-C stops the waiting, not the run: serve goes on with it.
 */
async function runOnServe(options: Record<string, unknown>, dir: string, { client, engine }: NonNullable<Awaited<ReturnType<typeof servingEngine>>>) {
  const { agent } = whatServeTakes(options, engine);
  const { BudgetOptions, exitCodeOf, runInput } = await runModule();
  // Parsed as a local run parses them, named as typed: sent as they came, `0x10` ran as 16 and `abc` was refused as `config.maxSteps`.
  const budgets = Object.fromEntries(
    Object.entries(parseOptions(BudgetOptions, options))
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => [name === 'approvalTimeout' ? 'approvalTimeoutSeconds' : name, value]),
  );
  const runId = options['runId'] as string | undefined;
  const existing = runId ? await client.get(runId) : undefined;
  if (options['resume'] && !existing) throw await noRunError(runId!);
  const input = existing ? existing.report.input : runInput(options['input'] as string | undefined, undefined, `${engine.agent?.name ?? 'the agent'} (serve runs it: pass --input)`);
  const fork = options['fork'] as ForkRequest | undefined;
  // A run serve holds already is its own agent's (a serve of several agents asks a start to name one).
  const runAgent = agent ?? existing?.agent;
  const started = await client.start({
    input,
    ...(runAgent && { agent: runAgent }),
    ...(runId && { runId }),
    ...(Object.keys(budgets).length > 0 && { config: budgets }),
    ...(options['model'] ? { model: options['model'] as string } : {}),
    ...(fork && { fork }),
  });
  const progress = options['json'] ? err : out;
  // Caught before the line that tells the user Ctrl-C stops the waiting.
  const signals = watchStopSignals();
  const what = fork ? `fork ${started.runId} of ${fork.from}` : `run ${started.runId}`;
  // A run that has ended is answered as it is (the same request again starts nothing): said as a local run says it.
  if (TERMINAL_LIFECYCLES.includes(started.lifecycle)) progress(`savepoint: run ${started.runId} had already finished; nothing to do (pass --run-id <a new id> to start another run)`);
  else progress(`savepoint: ${what} ${started.created ? 'started on' : 'is already held by'} \`savepoint serve\` (pid ${engine.pid}), which drives it; waiting for it (Ctrl-C stops waiting, not the run)…`);
  const run = await waitUnlessStopped(client, started.runId, signals, { who: `\`savepoint serve\` (pid ${engine.pid})`, say: progress }).catch((error: unknown) => {
    throw serveGone(error, engine, started.runId);
  });
  if (!run) return;
  // The figures of the execution that drove the run to its end, as a local run reports its own,
  // from the engine of the run's agent (serve with several agents runs each on its own engine).
  const execution = await servedExecutionFigures(await servedEngineOf(dir, engine, run.report.agent), run.report.chain.at(-1)?.executionArn ?? started.executionArn);
  if (options['json']) printJson({ ...run.report, lifecycle: run.lifecycle, execution });
  else printReport(run.report, execution);
  process.exitCode = exitCodeOf(run.report);
}

/**
 * Why the wait for a run serve drives ended, when serve went away (stopped, killed: its socket
 * closed, or a 503 from a serve draining): said as such, with what goes on with the run, not as the
 * transport's `socket hang up`. An answer of the API (a 4xx) is left as it is.
 */
function serveGone(error: unknown, engine: EngineFile, runId: string): unknown {
  const answered = (error as { name?: string }).name === 'RunsApiError' && (error as { status?: number }).status !== 503;
  if (answered || (error as { name?: string }).name === 'AbortError') return error;
  return new Error(
    `\`savepoint serve\` (pid ${engine.pid}) stopped answering before run ${runId} ended (${(error as Error).message}): the run is saved, and goes on when serve starts again on this state directory; \`${nextCommand(`status ${runId}`)}\` shows it`,
  );
}

/**
 * The run once it has ended; or, when a stop signal ends the waiting first (Ctrl-C), undefined,
 * having said that `who` goes on with the run and how to see it, the signal's exit code set. The
 * signals' handlers are removed either way.
 */
export async function waitUnlessStopped<Ended>(client: { wait(runId: string, options: { signal: AbortSignal }): Promise<Ended> }, runId: string, signals: StopSignals, { who, say }: { who: string; say: (line: string) => void }): Promise<Ended | undefined> {
  const stopWaiting = new AbortController();
  void signals.received.then((signal) => stopWaiting.abort(signal));
  try {
    return await client.wait(runId, { signal: stopWaiting.signal });
  } catch (error) {
    const signal = signals.first();
    if (!signal || (error as Error).name !== 'AbortError') throw error;
    say(`savepoint: ${signalCame(signal)} — stopped waiting; ${who} goes on with run ${runId}: \`${nextCommand(`status ${runId}`)}\` shows it`);
    process.exitCode = exitCodeOfSignal(signal);
    return undefined;
  } finally {
    signals.dispose();
  }
}
