import { toolSecretsFromEnv } from '../lambdas/tools/secrets.js';
import { waitForRunEnd } from '../local/runtime/chain.js';
import { DescribeExecutionCommand } from '@aws-sdk/client-sfn';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { loadReport, type RunReport } from '../lambdas/runs/report.js';
import type { AgentDefinition } from '../lambdas/define.js';
import type { ApprovalRecord, RunRecord } from '../lambdas/records/ledger-records.js';
import { parseModelSpec } from '../lambdas/models/spec.js';
import { ours } from '../lambdas/approvals/decision.js';
import { approvalRequested, type ApprovalRequested } from '../lambdas/approvals/notify.js';
import { runsApiStarter } from '../client/ledger-client.js';
import { loopbackRequest } from '../client/loopback-request.js';
import { formatAmount } from '../lambdas/shared/money.js';
import { executionInputTooLarge, modelSpecOf, newRunTooLarge, otherRequestProblem, RunId, runIdOf } from '../lambdas/runs/run-request.js';
import { ForkRequest, forkRunIdTaken, isSameFork } from '../lambdas/runs/fork.js';
import { budgetCeilings, overBudgetRequest } from '../lambdas/runs/budget-caps.js';
import { causeMessage, ErrorNames, InvalidInputError } from '../lambdas/shared/errors.js';
import { parseOrThrow, problemsOf } from '../lambdas/shared/validation.js';
import { agentModulePath, assertRunsLocally, knownAgents, loadAgent, SAVEPOINT_CODE } from '../local/runtime/agents.js';
import { executionFailure } from '../local/runtime/agent-errors.js';
import { crashInjector, CrashAt } from '../local/runtime/crash.js';
import { summarizeHistory } from '../local/engine/local-engine.js';
import { historyLog } from '../local/engine/history-log.js';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../local/runtime/local-stack.js';
import { LocalFleetBudget } from '../local/runtime/fleet-budget.js';
import { agentStateMachineOf, extractStateMachine, type CfnResource, type CfnTemplateJson } from '../local/template/asl.js';
import { isRecord } from '../lambdas/shared/json.js';
import { executionFigures, formatReport, terminalSafe, type ExecutionFigures } from './format.js';
import { amountOption, asTyped, describe as describeError, listenRefused, parseOptions, wholeNumberOption } from './errors.js';
import { deploymentPrices, priceFor, priceTable, type PriceOverrides, type PriceTable } from '../lambdas/models/prices.js';
import { modelConfigFromEnv } from '../lambdas/models/config.js';
import { modelRegistry } from '../lambdas/models/registry.js';
import { progressPrinter } from './progress.js';
import { checkStateDir, ownStateDir } from './owner.js';
import { signalCame, StoppedBySignal, watchStopSignals, type StopSignal, type StopSignals, runCleanups } from './signals.js';
import { UsageError } from './errors.js';
import { checkTracingEnv } from './tracing-env.js';
import { terminalQuestions, type TerminalQuestions } from './terminal-questions.js';
import { agentHomeOf, chooseLedger, kindToOpen, openLedger, publishEngine, rememberAgentModule, rememberedAgentModule, worldDataOf } from './state.js';
import { noRunError } from './target.js';
import { startLocalConsole } from '../console/local.js';
import { clip, counted } from '../lambdas/shared/text.js';
import { commandHint, resumeWords } from './command-hint.js';

export const ApprovalMode = z.enum(['prompt', 'approve', 'reject', 'wait']);

/**
 * The budgets a new run is given on the command line (its RunConfig), as typed: a local run's, and
 * those of a run handed to `savepoint serve` (cli/commands/run.ts), parsed by the same rules.
 */
export const BudgetOptions = z.object({
  approvalTimeout: wholeNumberOption(z.number().positive().max(7 * 24 * 3600)).optional(),
  maxSteps: wholeNumberOption(z.number().positive()).optional(),
  maxTokens: wholeNumberOption(z.number().positive()).optional(),
  maxTokensPerTurn: wholeNumberOption(z.number().positive()).optional(),
  maxDollars: amountOption(z.number().positive()).optional(),
  maxWallSeconds: wholeNumberOption(z.number().positive()).optional(),
  onBudgetExceeded: z.enum(['stop', 'ask']).optional(),
});

export const RunOptions = z
  .object({
    /** The agent: a name under agents/, or the path of its module. */
    agent: z.string().min(1, 'name the agent: --agent <name or path>'),
    /** The run's input: JSON, or the path of a JSON file; the world's default input when absent. */
    input: z.string().min(1).optional(),
    runId: RunId().optional(),
    /** The run's model (`provider:model-id`) instead of the agent's. */
    model: z
      .string()
      .min(1)
      .refine((spec) => isModelSpec(spec), { message: 'expected "provider:model-id" with provider one of sim, anthropic, bedrock, openai (e.g. anthropic:claude-sonnet-4-6)' })
      .optional(),
    /** `savepoint resume <runId>`: the run must exist; its day comes from the ledger. */
    resume: z.boolean().default(false),
    /** Resume even though the code changed since the run started. */
    force: z.boolean().default(false),
    /** `savepoint fork`: start the run as a fork of another (lambdas/runs/fork.ts). */
    fork: ForkRequest().optional(),
    failRate: amountOption(z.number().min(0).max(0.5)),
    seed: wholeNumberOption(),
    crashAt: CrashAt.optional(),
    crashRate: amountOption(z.number().min(0).max(1)).default(0),
    crashSeed: wholeNumberOption().optional(),
    maxRecoveries: wholeNumberOption(z.number().positive().max(100)).optional(),
    approve: ApprovalMode.optional(),
    ...BudgetOptions.shape,
    stateDir: z.string().min(1),
    memory: z.boolean(),
    /** The ledger: embedded (the default) or the DynamoDB ledger on dynalite. */
    ledger: z.enum(['embedded', 'dynalite']).optional(),
    /** When the ledger on disk acknowledges a write (LocalStackOptions.durability). */
    durability: z.enum(['sync', 'async']).optional(),
    worldData: z.string().min(1).optional(),
    /** A synthesized template (e.g. `cdk synth`'s) to run instead of synthesizing the stack here. */
    template: z.string().min(1).optional(),
    /** A JSON file of price overrides (`pricesFile`). */
    prices: z.string().min(1).optional(),
    /** A JSON file of the fleet budget (`fleetBudgetFile`). */
    fleetBudget: z.string().min(1).optional(),
    json: z.boolean(),
    /** The port of the console this run serves (console/). @default any free port */
    consolePort: wholeNumberOption(z.number().max(65535)).optional(),
  })
  .refine((options) => !options.memory || (options.crashAt === undefined && options.crashRate === 0), {
    path: ['crashAt'],
    message: 'crash injection needs a state directory to recover from (drop --memory)',
  })
  .refine((options) => !options.resume || options.runId !== undefined, { path: ['runId'], message: 'resume needs the id of the run' })
  .refine((options) => options.durability === undefined || (!options.memory && options.ledger !== 'dynalite'), {
    path: ['durability'],
    message: 'durability is the embedded ledger on disk\'s (drop --memory and --ledger dynalite, or drop --durability)',
  });
export type RunOptions = z.infer<typeof RunOptions>;

/** How long an approval waits when nobody can answer (no terminal, `--approve wait`): then it escalates. */
export const UNATTENDED_APPROVAL_TIMEOUT_SECONDS = 1;

export interface RunOutcome {
  report: RunReport;
  execution: ExecutionFigures;
  action: string;
  /** The stop signal that ended the wait: the run is saved, not finished. */
  signal?: StopSignal;
}

/**
 * `savepoint run` / `savepoint resume`: starts the local stack, lets the watchdog resume the runs
 * a dead process left running, starts (or resumes) the run through the Step Functions API, shows
 * progress and approvals as they come, and reports from the ledger at the end.
 */
export async function runCommand(raw: Record<string, unknown>, io: { out: (line: string) => void; err: (line: string) => void; interactive: boolean }) {
  const options = parseOptions(RunOptions, { ...raw, agent: raw['agent'] ?? (await agentOfRun(raw)) });
  // A bad prices file is refused before anything is loaded, made or kept.
  const prices = options.prices === undefined ? undefined : pricesFile(options.prices);
  const fleetBudget = options.fleetBudget === undefined ? undefined : fleetBudgetFile(options.fleetBudget);
  const requestedDir = options.memory ? undefined : resolve(options.stateDir);
  const { agent, module } = await loadAgent(options.agent);
  // A new run of an agent that a serve of several keeps beneath the state directory (agents/<name>/)
  // goes to that agent's directory, as serve's start would: its ledger, engine and world are there.
  const stateDir = requestedDir && !options.resume ? agentHomeOf(requestedDir, agent.name) : requestedDir;
  assertRunsLocally(agent, { ...(options.model && { model: options.model }) });
  const worldData = worldDataOf(stateDir, options.worldData);
  // A bad data file or input is refused before anything is made or kept (the state directory, its
  // ledger, the engine's ports): it names the file or field, and the next command starts clean.
  if (options.worldData) agent.dev?.checkData?.(options.worldData);
  const input = options.input === undefined ? undefined : runInput(options.input, undefined, agent.name);
  if (input !== undefined) parseOrThrow(agent.input, input, `input of agent ${agent.name}`);
  // No input, and no world to suggest one (its `defaultInput`, known once it has started): refused
  // here, not after the stack and its state directory were made — unless a run id is given, which
  // may name a run the state directory holds (its input is that run's).
  if (input === undefined && !agent.dev?.world && options.runId === undefined) throw inputNeeded(agent.name);
  // Too large on its own for the execution it would start (the runs API refuses what the request around it adds).
  const tooLarge = input !== undefined && (executionInputTooLarge(JSON.stringify({ input }), '--input') ?? newRunTooLarge(agent, input, '--input'));
  if (tooLarge) throw new UsageError(tooLarge);
  if (options.model !== undefined) await checkModel(options.model, deploymentPrices(agent.prices, prices));
  // A budget above what a run of the agent may ask for, named as typed (StartRun refuses it as
  // `config.<budget>`, once the stack has started). `resume` applies no budget: the run keeps its own.
  const overBudget = !options.resume && overBudgetRequest(options, budgetCeilings(agent), asTyped);
  if (overBudget) throw new UsageError(overBudget.message);
  // A crash aimed at a tool the agent does not have would never happen: the run would finish and
  // look recoverable without ever having been killed.
  const crashTool = options.crashAt?.tool;
  if (crashTool !== undefined) {
    const names = [...crashTargets(agent)];
    if (!names.includes(crashTool)) throw new UsageError(`--crash-at: agent ${agent.name} has no tool ${JSON.stringify(crashTool)} (it has ${names.join(', ')}): the crash would never happen`);
  }
  await checkTracingEnv();
  const approvalMode = options.approve ?? (io.interactive ? 'prompt' : 'wait');
  // Unattended, nobody will decide: approvals escalate quickly so the run finishes on its own
  // (`--approval-timeout`, or $SAVEPOINT_APPROVAL_TIMEOUT, gives `savepoint approve` longer).
  const approvalTimeoutSeconds = options.approvalTimeout ?? (approvalMode === 'wait' && !io.interactive ? UNATTENDED_APPROVAL_TIMEOUT_SECONDS : 300);
  const progress = options.json ? io.err : io.out;

  const logFile = stateDir && join(stateDir, 'savepoint.log');
  const decisions: Promise<void>[] = [];
  // Aborted when the run has ended: a question still open at the terminal then has nothing to decide.
  const runEnded = new AbortController();
  // The terminal's answers to the approvals asked here: one reader of stdin for the whole command.
  const questions = approvalMode === 'prompt' ? terminalQuestions(process.stdin, process.stdout) : undefined;
  const waitingForPerson = runsWaitingForPerson();
  let approvalsUrl = '';
  const onApproval = (approval: ApprovalRecord, event?: ApprovalRequested) => {
    waitingForPerson.add(approval.runId);
    const amount = approval.amount ? ` (${formatAmount(approval.amount)})` : '';
    progress(`          ⏸  approval ${approval.approvalId}: ${terminalSafe(approval.summary, { oneLine: true })}${amount} — decide by ${approval.decideBy}`);
    for (const link of event?.links ?? []) progress(`             decide (${link.approver}): ${link.url}`);
    // Past its deadline the approval has expired: its question is withdrawn, not left waiting forever.
    const withdrawn = AbortSignal.any([runEnded.signal, AbortSignal.timeout(Math.max(0, Date.parse(approval.decideBy) - Date.now()))]);
    decisions.push(decideApproval(approval, { mode: approvalMode, questions, approvalsUrl, progress, withdrawn, stateDir }).catch((error: unknown) => io.err(`approval ${approval.approvalId}: ${String(error)}`)));
  };
  const crashing = options.crashAt !== undefined || options.crashRate > 0;
  // Without --crash-seed, each engine after a crash draws other boundaries than the one before it
  // (the same seed would end every restarted engine after as many boundaries as the first).
  const crashLog = stateDir && join(stateDir, 'crashes.jsonl');
  const template = options.template ? templateFile(options.template, agent.name) : undefined;
  const stackOptions: LocalStackOptions = {
    agent,
    ...(prices && { prices }),
    ...(fleetBudget && { fleetBudget }),
    ledger: chooseLedger(stateDir, options.ledger),
    ...(options.durability && { durability: options.durability }),
    worldData: worldData.path,
    stateDir,
    failRate: options.failRate,
    seed: options.seed,
    onApproval,
    // Tool credentials from SAVEPOINT_TOOL_SECRET_<NAME> (on AWS: the construct's toolSecrets).
    toolSecrets: toolSecretsFromEnv(process.env),
    ...(template && { template }),
    ...(options.maxRecoveries && { recovery: { maxWithoutProgress: options.maxRecoveries } }),
    log: logFile ? (line) => appendFileSync(logFile, `${new Date().toISOString()} ${line}\n`, { mode: 0o600 }) : undefined,
    ...(crashing && {
      crash: crashInjector({ at: options.crashAt, rate: options.crashRate, seed: options.crashSeed ?? options.seed + crashesIn(crashLog), logFile: crashLog }),
    }),
  };

  // From here on a stop signal asks to stop at the next safe point; it never kills the process in
  // the middle of setting the state directory up. The handlers are in place before the first
  // line is printed, so whoever waits for that line may signal.
  const signals = watchStopSignals();
  const cleanups: (() => Promise<void> | void)[] = [() => signals.dispose(), () => questions?.close()];
  const cleanUp = () => runCleanups(cleanups);
  try {
    progress(`savepoint: starting the local stack${stateDir ? ` in ${stateDir}` : ' in memory'}…`);
    // The lock first: a second run on this state directory stops here, before it opens anything.
    const ownership = stateDir ? await ownStateDir(stateDir, options.resume ? 'resume' : 'run') : undefined;
    if (ownership) cleanups.push(() => ownership.release());
    // What the stack and the agent's world create there (its journals, the emulator's files) is made
    // private once they have opened it and again after they close (the directory, 0700, guards it meanwhile).
    if (stateDir) cleanups.push(() => checkStateDir(stateDir));
    // Opened before the stack and closed after it: every event of the run, its closing included, is kept.
    const history = stateDir ? historyLog(join(stateDir, 'history.jsonl'), { onError: (error) => io.err(`savepoint: warning: history.jsonl: ${describeError(error)}; its events are kept and written when it works again`) }) : undefined;
    if (history) cleanups.push(() => history.close());
    const stack = await startLocalStack(stackOptions);
    cleanups.push(() => stack.close());
    if (stateDir) checkStateDir(stateDir);
    // The console watches and steers this engine's runs (console/): its address carries the session token.
    const consoleServer = await startLocalConsole(stack, { stateDir, ...(options.consolePort !== undefined && { port: options.consolePort }), log: stackOptions.log }).catch((error: unknown) => {
      throw listenRefused(error, { port: options.consolePort, portOption: '--console-port' });
    });
    cleanups.push(() => consoleServer.close());
    progress(`savepoint: console ${consoleServer.url}`);
    if (stateDir && ownership) {
      rememberAgentModule(stateDir, agent.name, module);
      cleanups.push(
        publishEngine(stateDir, { pid: process.pid, nonce: ownership.nonce, startedAt: new Date().toISOString(), agent: { name: agent.name, module }, endpoints: { ...stack.endpoints, console: consoleServer.url } }),
      );
    }
    approvalsUrl = stack.endpoints.approvals;
    // What the world found wrong on opening (e.g. a torn journal line it cut off): say so.
    for (const note of stack.world.notes ?? []) io.err(`savepoint: warning: ${note}`);
    if (history) stack.engine.on(history);
    return await driveRun(stack, { options, agent, input, keepWorldData: worldData.keep, stateDir, approvalMode, approvalTimeoutSeconds, onApproval, waitingForPerson, decisions, runEnded, progress, signals });
  } finally {
    await cleanUp();
  }
}

/**
 * The agent of a run asked for without `--agent`: `resume <runId>` (the command printed after a
 * Ctrl-C) finds it in the ledger, which records each run's agent. Otherwise the agent must be
 * named, and the message says how and which agents there are.
 */
async function agentOfRun(raw: Record<string, unknown>): Promise<string> {
  const runId = typeof raw['runId'] === 'string' ? raw['runId'] : undefined;
  const agents = knownAgents();
  const named = `--agent <name|path> (or $SAVEPOINT_AGENT)${agents.length > 0 ? `; the agents found by name: ${agents.join(', ')}` : ''}`;
  if (!raw['resume'] || !runId || raw['memory']) throw new UsageError(`name the agent to run: ${named}`);
  const stateDir = resolve(String(raw['stateDir']));
  if (!existsSync(stateDir) || !kindToOpen(stateDir)) throw new UsageError(`no run ${runId} in ${stateDir}: it holds no ledger (pass --state-dir)`);
  const opened = await openLedger(stateDir, 'resume');
  let run: RunRecord | undefined;
  try {
    run = await opened.ledger.getRun(runId);
    // A run `savepoint prune` removed is named as such, as every command names it.
    if (!run) throw await noRunError(runId, opened, stateDir);
  } finally {
    await opened.close();
  }
  try {
    agentModulePath(run.agent);
    return run.agent;
  } catch {
    // Not found by name: the module it ran from here, when that is still there.
    const module = rememberedAgentModule(stateDir, run.agent);
    if (module !== undefined) return module;
    throw new UsageError(`run ${runId} is a run of agent ${run.agent}, which is not found by name here: pass --agent <the path of its module>`);
  }
}

interface DriveContext {
  options: RunOptions;
  agent: AgentDefinition;
  /** The run's input as `--input` gave it (read and checked before the stack started); else the world's. */
  input: unknown;
  keepWorldData: () => void;
  stateDir: string | undefined;
  approvalMode: z.infer<typeof ApprovalMode>;
  approvalTimeoutSeconds: number;
  onApproval: (approval: ApprovalRecord, event?: ApprovalRequested) => void;
  /** The runs that asked a person (their approvals went to `onApproval`). */
  waitingForPerson: RunsWaitingForPerson;
  decisions: Promise<void>[];
  runEnded: AbortController;
  progress: (line: string) => void;
  signals: StopSignals;
}

/** Starts (or resumes) the run on a started stack, waits for it (or a stop signal), and reports. */
async function driveRun(stack: LocalStack, context: DriveContext): Promise<RunOutcome> {
  const { options, agent, stateDir, approvalMode, approvalTimeoutSeconds, onApproval, waitingForPerson, decisions, progress, signals } = context;
  const stopped = signals.first();
  if (stopped) throw new StoppedBySignal(stopped); // during startup: no watchdog, no run
  const existing = options.runId ? await stack.ledger.getRun(options.runId) : undefined;
  if (options.resume && !existing) throw new InvalidInputError(`runId: no run ${options.runId} in ${stateDir ?? 'memory'}`);
  if (existing && existing.agent !== agent.name) throw new InvalidInputError(`runId: run ${existing.runId} belongs to agent ${existing.agent}, not ${agent.name}`);
  // A run id the ledger holds is that run: another --input or --model under it is refused by the
  // rule StartRun and the runs API apply, before an execution starts; the run's input is not
  // put in place of the one asked for.
  const other =
    existing &&
    otherRequestProblem(existing, {
      input: context.input === undefined ? existing.input : parseOrThrow(agent.input, context.input, `input of agent ${agent.name}`),
      model: options.model === undefined ? undefined : modelSpecOf(options.model, '--model'),
    });
  if (other) throw other;
  // A fork under a run id the ledger holds: the same fork asked for again is that run (resumed, or
  // answered as finished, as for `run`), as the runs API answers it; another is refused before an
  // execution starts (StartRun would refuse it, after the run's banner).
  let fork = options.fork;
  if (fork && existing) {
    if (!isSameFork(existing, { fork, input: existing.input, model: options.model === undefined ? undefined : modelSpecOf(options.model, '--model') })) throw forkRunIdTaken(existing.runId, '--run-id');
    fork = undefined;
  }
  const input = existing ? existing.input : context.input !== undefined ? context.input : runInput(undefined, stack.world.defaultInput, agent.name);
  const runId = options.runId ?? runIdOf(agent, parseOrThrow(agent.input, input, `input of agent ${agent.name}`));
  // Budgets given on the command line override the agent's defaults (RunConfig); the run
  // record keeps the figures it ran with.
  const budgets = {
    maxSteps: options.maxSteps,
    maxTokens: options.maxTokens,
    maxTokensPerTurn: options.maxTokensPerTurn,
    maxDollars: options.maxDollars,
    maxWallSeconds: options.maxWallSeconds,
    onBudgetExceeded: options.onBudgetExceeded,
  };
  const config = { approvalTimeoutSeconds, ...Object.fromEntries(Object.entries(budgets).filter(([, value]) => value !== undefined)) };
  // A run keeps the budgets it started with (StartRun): said, not silently ignored.
  const ignored = existing ? Object.entries(budgets).filter(([, value]) => value !== undefined).map(([name]) => asTyped(name)) : [];
  if (ignored.length > 0) progress(`savepoint: run ${runId} keeps the budgets it started with: ${ignored.join(', ')} not applied (a new run id takes them; a run that asks, onBudgetExceeded "ask", can be given more)`);
  const started = Date.now();
  const print = progressPrinter(progress, started);
  const stop = stack.engine.on((event) => print(event));

  // The watchdog: runs a dead process left running are resumed (this command resumes its own).
  // A run whose record fails verification is named and left as it is (`savepoint verify` says more).
  const onDamaged = (damagedRunId: string, error: Error) => progress(`savepoint: watchdog: left run ${damagedRunId} as it is — ${error.message}`);
  const recovered = (await stack.recoverOrphans({ except: runId, onDamaged })).filter((result) => result.action !== 'ignored');
  for (const result of recovered) {
    progress(
      result.action === 'recovered'
        ? `savepoint: watchdog: resumed run ${result.runId}, ${/ LOST$/.test(result.reason) ? 'left running by a process that died' : `whose recovery never ran (${result.reason})`} (recovery ${result.attempt}, execution ${result.executionArn})`
        : `savepoint: watchdog: gave run ${result.runId} up — ${result.reason}`,
    );
  }
  // Approvals a dead process was waiting on are still pending: decide them the way this run decides
  // (this agent's only: another agent's run waits for an engine of its own).
  for (const approval of await stack.ledger.listPendingApprovals()) {
    if (ours({ agentName: agent.name }, approval)) onApproval(approval, approvalRequested(approval, await stack.approvalLinks(approval)));
  }
  // Stopped while the watchdog worked: the stack is whole (it is closed like after a run), and
  // no run starts; what the watchdog resumed is resumed again by the next engine.
  const early = signals.first();
  if (early) throw new StoppedBySignal(early);
  context.keepWorldData();
  const name = `${runId}-${started.toString(36)}`;
  const startRunSettled = startRunOf(stack, name);
  // Through the runs API, as on AWS: the run's starter is this machine's user, as the loopback API
  // proved it (its credential), signed for StartRun (lambdas/runs/starter.ts) — not a field of the input.
  // Over node:http, not fetch: the API is on loopback, and loading fetch's implementation (Node's
  // bundled undici) cost each run ~10 ms of CPU for this one request.
  const { executionArn } = await runsApiStarter(stack.endpoints.runs, loopbackRequest)({
    runId, input, config, stateMachineArn: stack.stateMachineArn, executionName: name,
    ...(options.model && { model: options.model }), ...(options.force ? { force: true } : {}), ...(fork && { fork }),
  });
  // What the ledger holds once StartRun has settled (a few ms) is what the banner states: a resumed
  // run keeps the approval wait it started with, whatever this command line says.
  await startRunSettled;
  const record = await stack.ledger.getRun(runId);
  progress(`savepoint: run ${runId}${existing && existing.status !== 'succeeded' ? ' (resumed)' : ''} — execution ${executionArn}`);
  const wait = record?.config.approvalTimeoutSeconds ?? approvalTimeoutSeconds;
  progress(`savepoint: approvals ${approvalMode === 'prompt' ? 'are asked here' : approvalMode === 'wait' ? `wait ${wait} s for \`${commandHint('approve <id>', { stateDir })}\`, then escalate` : `are ${approvalMode === 'reject' ? 'rejected' : 'approved'} automatically`}`);
  // The runs the watchdog resumed are driven on with this one — but not waited for once they wait
  // for a person this command does not decide for (that could be a day): they are left, saved, as
  // below, for the next engine (`savepoint serve` drives every run to its end).
  const decidesAll = approvalMode === 'approve' || approvalMode === 'reject';
  // Continue-as-new: a run may go on in successor executions; wait for the last of the chain. And
  // an execution that failed or timed out is resumed by recovery (RecoverRun, up to --max-recoveries
  // in a row without progress): a run's end is after it, not at the failure.
  const endOf = (id: string, arn: string) =>
    waitForRunEnd(stack.engine, stack.ledger, id, arn, (ended, recovery, next) =>
      progress(`savepoint: execution ${ended.name} ${ended.status}${ended.error ? ` (${ended.error}: ${clip(causeMessage(ended.cause), 200)})` : ''}; recovery ${recovery.attempts} resumes the run${id === runId ? '' : ` ${id}`} — execution ${next.split(':').pop()}`),
    );
  const others = recovered.flatMap((result) => {
    if (result.action !== 'recovered') return [];
    const ended = endOf(result.runId, result.executionArn);
    return [decidesAll ? ended : Promise.race([ended, waitingForPerson.until(result.runId).then(() => undefined)])];
  });
  const runEnd = endOf(runId, executionArn!);
  const finished = await Promise.race([Promise.all([runEnd, ...others]), signals.received]);
  stop();
  const signal = typeof finished === 'string' ? finished : undefined;
  if (!signal) {
    for (const other of (finished as Exclude<typeof finished, string>).slice(1)) {
      if (other) progress(`savepoint: watchdog: ${other.name}: ${other.status}${other.error ? ` ${other.error}: ${causeMessage(other.cause)}` : ''}`);
    }
  }
  // Runs started through this engine's runs API while it served (an app: `savepoint run` is one-shot),
  // and resumed runs left waiting for a person, end with this process: say which, and what resumes them.
  const left = await othersLeftRunning(stack, runId);
  if (left.length > 0) {
    const named = left.map((other) => (waitingForPerson.has(other) ? `${other}, waiting for a person` : other));
    progress(
      `savepoint: this command ends with its run, and ${counted(left.length, 'other run')} ${left.length === 1 ? 'is' : 'are'} left unfinished (${named.join('; ')}): ` +
        `they are saved, and resume when the next engine starts on this state directory (\`${commandHint('serve', { stateDir })}\`, \`${commandHint('run', { stateDir })}\`, or \`${commandHint('resume <runId>', { stateDir })}\`); to drive every run to its end, use \`savepoint serve\``,
    );
  }
  // A question at the terminal is not waited for once the run has ended or was asked to stop: nobody needs the answer.
  if (approvalMode === 'prompt') context.runEnded.abort(signal ? STOPPING : ENDED);
  if (!(signal && approvalMode === 'prompt')) await Promise.allSettled(decisions);
  const lastArn = typeof finished === 'string' ? executionArn! : finished[0]!.executionArn;
  const execution = await stack.sfn.send(new DescribeExecutionCommand({ executionArn: lastArn }));
  const figures = executionFigures(lastArn, execution.status ?? 'UNKNOWN', summarizeHistory(stack.engine.getExecutionHistory(lastArn)));
  const report = await loadReport(stack.ledger, runId, new Date(), agent);
  // StartRun refused the run (bad input, a resume on changed code of a run that finished before
  // this command): say why, as invalid input — not the report of a run it did not make.
  const finishedBefore = report?.finishedAt !== undefined && Date.parse(report.finishedAt) < started;
  if (execution.error === ErrorNames.InvalidInput && (!report || report.status === 'running' || finishedBefore)) throw new InvalidInputError(causeMessage(execution.cause));
  if (!report) {
    if (signal) throw new StoppedBySignal(signal);
    throw new Error(`run ${runId} did not start: ${executionFailure(execution.error, execution.cause, SAVEPOINT_CODE)}`);
  }
  // Said once StartRun has settled and the run is known to exist: then, and only then, it is saved.
  // A run in memory (--memory) ends with its process: nothing is saved to resume.
  const resumeCommand = stateDir && `\`${commandHint(resumeWords(runId, approvalMode), { stateDir })}\``;
  const inMemory = 'the run was in memory (--memory) and ends with this process: nothing can resume it';
  if (signal) progress(`savepoint: ${signalCame(signal)} — ${resumeCommand ? `the run is saved; resume it with ${resumeCommand}` : inMemory}`);
  // The execution ended and the ledger still says the run runs: its end could not be recorded (the
  // ledger's own writes failed: a full disk, a file-size limit), and the report alone would read as
  // a run still going. Saved as it was: the next engine resumes it.
  if (!signal && report.status === 'running' && execution.status !== 'RUNNING') {
    const failure = executionFailure(execution.error, execution.cause, SAVEPOINT_CODE);
    progress(`savepoint: the run's execution ended ${execution.status} (${failure}) before the run's end could be recorded; ${resumeCommand ? `the run is saved as it was: once the cause is fixed, resume it with ${resumeCommand}` : inMemory}`);
  }
  const action = execution.status === 'SUCCEEDED' && finishedBefore ? 'already finished' : 'ran';
  if (action === 'already finished') progress(alreadyFinished(runId, await stack.ledger.getRun(runId), stack.fingerprintOf));
  // Killed by the switch that stops every run: said, with what lifts it, before the next run is killed the same way.
  if (report.status === 'killed' && (await stack.ledger.getGlobalKill())) progress(`savepoint: the global kill switch is on: every run on this state directory stops before its next step (\`${commandHint('kill --all --lift', { stateDir })}\` lifts it)`);
  return { report, execution: figures, action, ...(signal && { signal }) } satisfies RunOutcome;
}

/** The runs that asked a person for a decision, and a wait for a run to ask one. */
interface RunsWaitingForPerson {
  add(runId: string): void;
  has(runId: string): boolean;
  /** Settles once `runId` has asked a person (at once if it has). */
  until(runId: string): Promise<void>;
}

function runsWaitingForPerson(): RunsWaitingForPerson {
  const asked = new Set<string>();
  const waiters = new Map<string, (() => void)[]>();
  return {
    add(runId) {
      asked.add(runId);
      for (const wake of waiters.get(runId) ?? []) wake();
      waiters.delete(runId);
    },
    has: (runId) => asked.has(runId),
    until: (runId) => (asked.has(runId) ? Promise.resolve() : new Promise((resolve) => waiters.set(runId, [...(waiters.get(runId) ?? []), resolve]))),
  };
}

/** The runs other than `runId` whose executions are still running on this engine, which is about to close. */
async function othersLeftRunning(stack: LocalStack, runId: string): Promise<string[]> {
  const live = new Set(stack.engine.listExecutions({ statusFilter: 'RUNNING' }).executions.map((execution) => execution.executionArn));
  if (live.size === 0) return [];
  return (await stack.ledger.listRunningRuns()).filter((run) => run.runId !== runId && live.has(run.executionArn)).map((run) => run.runId);
}

/**
 * Settles when the execution named `name` has passed its StartRun state, or ended without it: from
 * then on the ledger says whether the run exists (a stop signal before it would leave that a guess).
 */
function startRunOf(stack: LocalStack, name: string): Promise<void> {
  return new Promise((resolve) => {
    const stop = stack.engine.on((event) => {
      if (!event.executionArn.endsWith(`:${name}`)) return;
      if (event.stateExitedEventDetails?.name === 'StartRun' || /^Execution(Succeeded|Failed|Aborted|TimedOut)$/.test(event.type)) {
        stop();
        resolve();
      }
    });
  });
}

/**
 * Why nothing ran. The default run id hashes the input only, so after an edit of the agent the same
 * command names the finished run again: then say that it ran on other code, and how to run this one.
 */
function alreadyFinished(runId: string, run: RunRecord | undefined, fingerprintOf: (model: string) => string): string {
  const another = `pass --run-id <a new id> to start another run`;
  const fingerprint = run && fingerprintOf(run.model);
  if (!run || run.fingerprint === fingerprint) return `savepoint: run ${runId} had already finished; nothing to do (${another})`;
  return (
    `savepoint: run ${runId} had already finished, on other code: the agent changed since (fingerprint ${run.fingerprint} then, ${fingerprint} now). ` +
    `This is that run's report; to run the changed agent on the same input, ${another}, e.g. --run-id ${runId}-2`
  );
}

/** Why a question at the terminal was withdrawn: the run ended, or the command was asked to stop (its deadline: a TimeoutError). */
const ENDED = 'the run has ended';
const STOPPING = 'the command is stopping; the run is saved';

/** Decides one approval the way the run was told to, through the approval API (the real route). */
async function decideApproval(
  approval: ApprovalRecord,
  how: { mode: z.infer<typeof ApprovalMode>; questions: TerminalQuestions | undefined; approvalsUrl: string; progress: (line: string) => void; withdrawn: AbortSignal; stateDir: string | undefined },
) {
  const { mode, questions, approvalsUrl, progress, withdrawn } = how;
  let decision: 'approve' | 'reject' | undefined = mode === 'approve' || mode === 'reject' ? mode : undefined;
  let reason = mode === 'prompt' ? undefined : `decided by --approve ${mode}`;
  if (questions) {
    try {
      const answer = await questions.ask(`  approve ${terminalSafe(approval.summary, { oneLine: true })}? [y/N] `, withdrawn);
      // The input ended (Ctrl-D, a pipe run dry): no answer, so no decision; the approval waits as with --approve wait.
      if (answer === undefined) {
        const decide = commandHint(`approve ${approval.approvalId}`, { stateDir: how.stateDir });
        return progress(`\n          ✗  approval ${approval.approvalId}: not decided here (the terminal's input has ended): \`${decide}\` or reject decides it by ${approval.decideBy}, else it escalates`);
      }
      decision = ['y', 'yes'].includes(answer.trim().toLowerCase()) ? 'approve' : 'reject';
      reason = decision === 'reject' ? (await questions.ask('  reason: ', withdrawn))?.trim() || 'rejected at the terminal' : 'approved at the terminal';
    } catch (error) {
      if (!withdrawn.aborted) throw error;
      progress(`\n          ✗  approval ${approval.approvalId}: no longer asked (${withdrawn.reason instanceof DOMException && withdrawn.reason.name === 'TimeoutError' ? 'its deadline passed' : String(withdrawn.reason)})`);
      return;
    }
  }
  if (!decision) return;
  // The approval API of this process, on loopback (runsApiStarter above).
  const response = await loopbackRequest(`${approvalsUrl}/${approval.approvalId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ decision, reason }),
  });
  const body = JSON.parse(await response.text()) as { status?: string; message?: string };
  if (response.ok) return progress(`          ✓  approval ${approval.approvalId}: ${body.status}`);
  // Refused (decided or expired already, past its deadline): the refusal says so, naming the approval.
  const refusal = body.message ?? `refused (${response.status})`;
  progress(`          ✗  ${refusal.startsWith(`approval ${approval.approvalId}`) ? refusal : `approval ${approval.approvalId}: ${refusal}`}`);
}

/** 0 succeeded · 1 failed · 3 stopped by a guard (a budget, a loop, a kill). */
export function exitCodeOf(report: RunReport): number {
  if (report.status === 'succeeded') return 0;
  return report.status === 'stopped' || report.status === 'killed' ? 3 : 1;
}

export { formatReport };

/** Crashes injected so far on a state directory (one JSON line each). */
function crashesIn(logFile: string | undefined): number {
  return logFile && existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').filter(Boolean).length : 0;
}

function isModelSpec(spec: string): boolean {
  try {
    parseModelSpec(spec);
    return true;
  } catch {
    return false;
  }
}

/** `--input`: JSON text, or the path of a JSON file; without it, the input the agent's world suggests. */
export function runInput(option: string | undefined, fallback: unknown, agentName: string): unknown {
  if (option === undefined) {
    if (fallback === undefined) throw inputNeeded(agentName);
    return fallback;
  }
  // JSON text as it is: an object, a list, a string; a scalar (`5`, `true`) when no file has that name.
  const inline = /^\s*[{["]/.test(option) || (!existsSync(option) && scalarJson(option));
  const text = inline ? option : readInputFile(option);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(`input: not valid JSON (${(error as Error).message})`);
  }
}

const inputNeeded = (agentName: string) => new InvalidInputError(`input: agent ${agentName} needs an input: --input <json|file>`);

/** Whether `text` is a JSON number, `true`, `false` or `null`. */
function scalarJson(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return value === null || typeof value === 'number' || typeof value === 'boolean';
  } catch {
    return false;
  }
}

function readInputFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new InvalidInputError(`input: cannot read ${path}: ${(error as Error).message}`);
  }
}

/**
 * A model named with `--model`, checked before anything is made (the engine would find the same at
 * the run's first turn, the run made and failed by then): its price, so that a dollar budget never
 * reads zero, and, for a provider's model, what the environment must give it (its API key, a base
 * URL that is one). The simulated model is the local stack's own.
 */
async function checkModel(spec: string, prices: PriceTable | undefined): Promise<void> {
  priceFor(spec, prices);
  if (parseModelSpec(spec).provider !== 'sim') await modelRegistry(() => modelConfigFromEnv(process.env)).clientFor(spec);
}

/**
 * `--prices <file>`: price overrides by model spec, checked before anything starts; a file that
 * cannot be read, is not JSON or holds a bad price is refused once, naming the file and the field.
 */
export function pricesFile(path: string): PriceOverrides {
  const parsed = jsonFile('--prices', path);
  try {
    // Checked as the steps will read it: every field, and every spec a model spec.
    priceTable(parsed);
  } catch (error) {
    throw new UsageError(`--prices ${path}: ${(error as Error).message}`);
  }
  return parsed as PriceOverrides;
}

/** The JSON in the file an option names; a file that cannot be read or is not JSON is refused, naming the option and the file. */
function jsonFile(option: string, path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`${option} ${path}: cannot read it: ${describeError(error)}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${option} ${path}: not valid JSON (${(error as Error).message})`);
  }
}

/**
 * `--template <file>`: a synthesized CloudFormation template, as `cdk synth` writes it, holding the
 * agent's state machine: checked before the state directory is made (the stack, once started, would
 * find the same and fail with exit 1, the directory made by then); a file that is not such a
 * template (JSON that is not a template, or a template without it) is refused, naming the file.
 */
export function templateFile(path: string, agentName: string): CfnTemplateJson {
  const template = jsonFile('--template', path);
  const resources = isRecord(template) ? template['Resources'] : undefined;
  if (!isRecord(resources) || !Object.values(resources).every(isRecord)) throw new UsageError(`--template ${path}: not a CloudFormation template (no "Resources" object of resources)`);
  try {
    // The state machine the stack will run, found as it finds it, and its definition read as it reads
    // it: one it cannot read (none, not JSON) failed once the stack had made the state directory (exit 1).
    const machine = agentStateMachineOf(resources as Record<string, CfnResource>, agentName);
    extractStateMachine(template as CfnTemplateJson, { stateMachineLogicalId: machine });
  } catch (error) {
    throw new UsageError(`--template ${path}: ${(error as Error).message}`);
  }
  return template as CfnTemplateJson;
}

/**
 * `--fleet-budget <file>`: the deployment's fleet budget for the local engine (local/runtime/
 * fleet-budget.ts), checked before anything starts; a bad field is refused, naming it.
 */
export function fleetBudgetFile(path: string): LocalFleetBudget {
  const parsed = LocalFleetBudget().safeParse(jsonFile('--fleet-budget', path));
  if (!parsed.success) throw new UsageError(`--fleet-budget ${path}: ${problemsOf(parsed.error)}`);
  return parsed.data;
}

/**
 * What a `--crash-at <point>:<tool>` may name: the agent's tools and, through each agent tool, the
 * child agent and its own (a crash point holds in the child runs the run starts too).
 */
function crashTargets(agent: Partial<Pick<AgentDefinition, 'tools'>>, seen = new Set<unknown>()): Set<string> {
  const names = new Set<string>();
  if (seen.has(agent)) return names;
  seen.add(agent);
  for (const tool of agent.tools ?? []) {
    names.add(tool.name);
    if (!tool.child) continue;
    names.add(tool.child.agent.name);
    // Locally a child agent is its whole definition (local/runtime/children.ts), its tools included.
    for (const name of crashTargets(tool.child.agent as Partial<Pick<AgentDefinition, 'tools'>>, seen)) names.add(name);
  }
  return names;
}
