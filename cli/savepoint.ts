import { Command, Option } from 'commander';
import type { RunVerification } from '../lambdas/ledger/seal.js';
import type { AgentDefinition } from '../lambdas/define.js';
import { CircuitBreaker } from '../lambdas/guards/breaker.js';
import { signedLinks } from '../lambdas/approvals/decision.js';
import { localUser } from '../local/approval-api.js';
import { localApprovalKeys } from '../local/approval-keys.js';
import { modelBreaker, toolsBreaker } from '../lambdas/guards/breaker.js';
import { systemClock } from '../lambdas/shared/ports.js';
import { ErrorNames } from '../lambdas/shared/errors.js';
import { agentModulePath, loadAgent } from '../local/agents.js';
import { CRASH_POINTS } from '../local/crash.js';
import { formatApproval, formatBreaker, formatReport } from './format.js';
import { registerConsoleCommand } from './console.js';
import { UsageError } from './errors.js';
import { ownStateDir } from './owner.js';
import { exitCodeOfSignal, StoppedBySignal } from './signals.js';
import { z } from 'zod';
import { approvalApiDecider, createClient, type SavepointClient } from '../client/index.js';
import type { Ledger } from '../lambdas/ledger/ledger.js';
import { CalendarDate } from '../lambdas/shared/dates.js';
import { parseOrThrow } from '../lambdas/shared/validation.js';
import { DEFAULT_STATE_DIR, openLedger, runningEngine, worldDataOf, type EngineFile, type OpenLedger } from './state.js';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

const out = (line: string): void => void process.stdout.write(`${line}\n`);
const err = (line: string): void => void process.stderr.write(`${line}\n`);
const printJson = (value: unknown) => out(JSON.stringify(value, null, 2));

const program = new Command('savepoint')
  .description('Durable agent runs on AWS Step Functions — any agent, run locally on the same definition.')
  .option('--state-dir <dir>', 'where the local ledger, the simulated world and the logs live', DEFAULT_STATE_DIR)
  .option('--stack <name>', 'work on a deployed stack (found by its CloudFormation outputs, with your AWS credentials) instead of the local state directory')
  .option('--region <region>', 'the deployed stack\'s region (default: your AWS configuration\'s)')
  .showHelpAfterError();

const stateDir = () => resolve(program.opts<{ stateDir: string }>().stateDir);
const deployed = () => program.opts<{ stack?: string; region?: string }>();
const AGENT_HELP = 'the agent: a name (agents/<name>/agent.ts) or the path of its module (default: $SAVEPOINT_AGENT)';
const defaultAgent = process.env['SAVEPOINT_AGENT'] || undefined;

/**
 * The agent a command names, else the one the running engine runs (`engine`: the caller's view of
 * it, when it holds the state directory already), else the one that ran the run in question.
 */
async function agentFor(explicit: string | undefined, runAgent?: string, engine?: EngineFile | null): Promise<AgentDefinition | undefined> {
  const running = engine === undefined ? await runningEngine(stateDir()) : (engine ?? undefined);
  const spec = explicit ?? running?.agent?.module ?? runAgent ?? defaultAgent;
  if (!spec) return undefined;
  try {
    agentModulePath(spec);
  } catch {
    return undefined; // an agent that is not here: the report goes without its own summary
  }
  return (await loadAgent(spec)).agent;
}

program
  .command('run')
  .description("run an agent on the local engine (resumes the run if it exists)")
  .option('--agent <name|path>', AGENT_HELP, defaultAgent)
  .option('--input <json|file>', "the run's input, checked by the agent's input schema (default: what the agent's simulated world serves)")
  .option('--run-id <id>', "the run id, the idempotency key of the whole run (default: the agent's, from the input)")
  .option('--model <provider:model>', "the run's model instead of the agent's, e.g. anthropic:claude-sonnet-4-5 (keys and endpoints from ANTHROPIC_API_KEY, OPENAI_API_KEY, AWS_REGION, …)")
  .option('--fail-rate <p>', 'inject transient failures into model and provider requests, probability per request', '0')
  .option('--seed <n>', 'seed of the injected failures', '1')
  .addOption(new Option('--approve <mode>', 'how approvals are decided (default: prompt in a terminal, wait otherwise)').choices(['prompt', 'approve', 'reject', 'wait']))
  .option('--approval-timeout <seconds>', 'escalate approvals not decided within this time (default: $SAVEPOINT_APPROVAL_TIMEOUT, else 1 unattended, 300 in a terminal)', process.env['SAVEPOINT_APPROVAL_TIMEOUT'] || undefined)
  .option('--max-steps <n>', 'step budget: model turns + tool calls (default 400)')
  .option('--max-tokens <n>', 'token budget, input + output over the run (default 600000)')
  .option('--max-tokens-per-turn <n>', 'max_tokens of every model call (default 2048)')
  .option('--max-dollars <d>', 'dollar budget of the model calls (default 5)')
  .option('--max-wall-seconds <s>', 'wall-clock budget since the run first started (default 14400)')
  .addOption(new Option('--on-budget-exceeded <mode>', 'stop, or ask a person to extend the budget (default stop)').choices(['stop', 'ask']))
  .option('--memory', 'keep nothing: in-memory ledger and simulated world', false)
  .addOption(new Option('--ledger <kind>', "the ledger: embedded (in this process) or dynalite (the DynamoDB ledger on the emulator); default: the state directory's, else embedded").choices(['embedded', 'dynalite']))
  .option('--world-data <file>', "a data file the agent's simulated world serves, e.g. the refund reconciler's day (default: the state directory's, else the agent's sample)")
  .option('--json', 'print the report as JSON (progress goes to stderr)', false)
  .option('--force', 'resume a run even though the code changed since it started', false)
  .option('--crash-at <point[:tool][:nth]>', `end the process with SIGKILL the nth time a step boundary is reached (${CRASH_POINTS.join(', ')})`)
  .option('--crash-rate <p>', 'end the process with SIGKILL at any step boundary with this probability', '0')
  .option('--crash-seed <n>', 'seed of --crash-rate (default: --seed)')
  .option('--max-recoveries <n>', 'automatic recoveries in a row without progress before a run is given up (default 3)')
  .option('--template <file>', 'run this synthesized template (e.g. cdk.out/Savepoint.template.json) instead of synthesizing the stack')
  .option('--wait', 'with --stack: wait for the run to finish and report it', false)
  .action(runAndReport);

program
  .command('resume <runId>')
  .description('resume an unfinished run where it stopped (after a crash, an interrupt, or a failure)')
  .option('--agent <name|path>', AGENT_HELP, defaultAgent)
  .option('--force', 'resume even though the code changed since the run started', false)
  .option('--fail-rate <p>', 'inject transient failures into model and provider requests, probability per request', '0')
  .option('--seed <n>', 'seed of the injected failures', '1')
  .addOption(new Option('--approve <mode>', 'how approvals are decided (default: prompt in a terminal, wait otherwise)').choices(['prompt', 'approve', 'reject', 'wait']))
  .option('--approval-timeout <seconds>', 'escalate approvals not decided within this time')
  .option('--world-data <file>', 'as for run')
  .addOption(new Option('--ledger <kind>', 'as for run').choices(['embedded', 'dynalite']))
  .option('--json', 'print the report as JSON (progress goes to stderr)', false)
  .option('--crash-at <point[:tool][:nth]>', 'as for run')
  .option('--crash-rate <p>', 'as for run', '0')
  .option('--crash-seed <n>', 'as for run')
  .option('--max-recoveries <n>', 'automatic recoveries in a row without progress before a run is given up (default 3)')
  .option('--template <file>', 'run this synthesized template (e.g. cdk.out/Savepoint.template.json) instead of synthesizing the stack')
  .option('--wait', 'with --stack: wait for the run to finish and report it', false)
  .action((runId: string, options: Record<string, unknown>) => runAndReport({ ...options, runId, resume: true, memory: false }));

/**
 * What `run` / `resume` need (the local engine, the Step Functions interpreter, the providers),
 * loaded only by them: every other command starts without it.
 */
const runModule = () => import('./run.js');

async function runAndReport(options: Record<string, unknown>) {
  if (deployed().stack) return startOnStack(options);
  const { exitCodeOf, runCommand } = await runModule();
  const outcome = await runCommand({ ...options, stateDir: stateDir() }, { out, err, interactive: Boolean(process.stdin.isTTY) });
  if (options['json']) printJson({ ...outcome.report, execution: outcome.execution });
  else out(formatReport(outcome.report, outcome.execution));
  // Stopped by a signal: saved, not finished — the shell's 128 + signal, like the default handler.
  process.exitCode = outcome.signal ? exitCodeOfSignal(outcome.signal) : exitCodeOf(outcome.report);
}

/**
 * `run` / `resume` on a deployed stack: starts (or resumes) the run through the Step Functions API
 * and says where to watch it; with `--wait`, waits for it and reports like the local run.
 */
async function startOnStack(options: Record<string, unknown>) {
  const runId = options['runId'] as string | undefined;
  const { exitCodeOf, runInput } = await runModule();
  await withClient('run', options['agent'] as string | undefined, runId, async ({ client, ledger, link }) => {
    const existing = runId ? await ledger.getRun(runId) : undefined;
    if (options['resume'] && !existing) throw new UsageError(`no run ${runId} on stack ${deployed().stack}`);
    const input = existing ? existing.input : runInput(options['input'] as string | undefined, undefined, 'of this stack');
    const started = await client.start({ input, ...(runId && { runId }), ...(options['force'] ? { force: true } : {}) });
    const where = { runId: started.runId, executionArn: started.executionArn, execution: link(started.executionArn) };
    if (!options['wait']) return options['json'] ? printJson(where) : out(`run ${where.runId} started: ${where.execution}`);
    (options['json'] ? err : out)(`run ${where.runId} started: ${where.execution}; waiting for it…`);
    const view = await client.wait(started.runId);
    if (options['json']) printJson({ ...view.report, lifecycle: view.lifecycle });
    else out(formatReport(view.report));
    process.exitCode = exitCodeOf(view.report);
  });
}

program
  .command('status <runId>')
  .description("a run's status and figures, from the ledger")
  .option('--agent <name|path>', "the run's agent, for its own summary (default: the agent named in the run)")
  .option('--json', 'print JSON', false)
  .action((runId: string, options: { json: boolean; agent?: string }) =>
    withClient('status', options.agent, runId, async ({ client }) => {
      const view = await client.status(runId);
      if (!view) throw new UsageError(`no run ${runId} in ${stateDir()}`);
      if (options.json) printJson({ ...view.report, lifecycle: view.lifecycle });
      else out(formatReport(view.report));
    }),
  );

program
  .command('verify [runId]')
  .description("checks a run's sealed ledger records (or, with --all, every run's): exit 0 when all verify, 1 when any fails")
  .option('--all', 'every run in the ledger', false)
  .option('--json', 'print JSON', false)
  .action(async (runId: string | undefined, options: { all: boolean; json: boolean }) => {
    if (Boolean(runId) === options.all) throw new UsageError('verify takes a run id, or --all');
    await withClient('verify', undefined, undefined, async ({ client }) => {
      const reports = await client.verify(runId ?? 'all');
      if (!reports) throw new UsageError(`no run ${runId} in ${where()}`);
      const failed = reports.filter((report) => report.problems.length > 0);
      if (options.json) printJson({ runs: reports, ok: failed.length === 0 });
      else {
        out(reports.length === 0 ? 'no runs' : reports.map(formatVerification).join('\n'));
        if (reports.length > 1) out(`${reports.length - failed.length} of ${reports.length} runs verify`);
      }
      if (failed.length > 0) process.exitCode = 1;
    });
  });

program
  .command('approvals')
  .description('the approvals waiting for a decision')
  .option('--json', 'print JSON', false)
  .action((options: { json: boolean }) =>
    withClient('approvals', undefined, undefined, async ({ client, engine }) => {
      // Links point at the running engine's approval page, signed with the state directory's key.
      const pageUrl = engine?.endpoints['approvalPage'];
      const links = pageUrl ? { signer: localApprovalKeys(stateDir()).links, pageUrl, approvers: [localUser()] } : undefined;
      const pending = await Promise.all(
        (await client.approvals()).map(async (approval) => ({ ...approval, links: await signedLinks(links, approval) })),
      );
      if (options.json) printJson({ approvals: pending });
      else out(pending.length === 0 ? 'no approval is waiting' : pending.map(formatApproval).join('\n'));
    }),
  );

for (const [name, decision] of [['approve', 'approve'], ['reject', 'reject']] as const) {
  program
    .command(`${name} <approvalId>`)
    .description(`${name} a pending approval (through the running engine's approval API, or recorded for the next resume)`)
    .option('--reason <text>', 'why, recorded with the decision')
    .action((approvalId: string, options: { reason?: string }) =>
      withClient(decision, undefined, undefined, async ({ client, live }) => {
        const result = await client.decide(approvalId, decision, { reason: options.reason });
        if (!result.ok) throw new UsageError(`${result.status}: ${result.message}`);
        out(`${approvalId}: ${result.approval.status}${live ? '' : ' (recorded; the run continues when it resumes)'}`);
      }),
    );
}

program
  .command('kill [runId]')
  .description('stop a run (or, with --all, every run) before its next step; nothing the model says undoes it')
  .option('--all', 'the global kill switch: every run stops before its next step', false)
  .option('--lift', 'with --all: lift the global kill switch', false)
  .option('--reason <text>', 'why, recorded with the kill', '')
  .action(async (runId: string | undefined, options: { all: boolean; lift: boolean; reason: string }) => {
    if (Boolean(runId) === options.all) throw new UsageError('kill takes a run id, or --all');
    await withClient('kill', undefined, runId, async ({ client, ledger }) => {
      if (options.all) {
        await ledger.setGlobalKill(options.lift ? undefined : { by: cliUser(), at: new Date().toISOString(), reason: options.reason });
        return out(options.lift ? 'global kill switch lifted' : `global kill switch on: every run stops before its next step`);
      }
      if (!(await ledger.getRun(runId!))) throw new UsageError(`no run ${runId} in ${stateDir()}`);
      await client.cancel(runId!, { by: cliUser(), reason: options.reason });
      out(`run ${runId}: killed; it stops before its next step`);
    });
  });

program
  .command('migrate <runId>')
  .description("move a live run to the deployed version of its agent, if that version declares the run's version compatible (recorded in the run)")
  .requiredOption('--to <version>', "the agent version to move the run to: the deployed one (the agent's `version`)")
  .option('--json', 'print JSON', false)
  .action((runId: string, options: { to: string; json: boolean }) =>
    withClient('migrate', undefined, runId, async ({ client }) => {
      const view = await client.migrate(runId, { to: options.to, by: cliUser() });
      const migration = view.report.version.migrations.at(-1)!;
      if (options.json) return printJson({ runId, lifecycle: view.lifecycle, migration });
      out(`run ${runId}: migrated from version ${migration.from.version} (${migration.from.fingerprint}) to ${migration.to.version} (${migration.to.fingerprint}); it continues on the new version from its next step`);
    }),
  );

program
  .command('runs')
  .description('the runs, newest first, with status, steps, dollars and the execution that drives each')
  .option('--status <status>', 'only runs with this status (running, succeeded, stopped, killed, failed)')
  .option('--since <YYYY-MM-DD>', 'only runs created on or after this day')
  .option('--limit <n>', 'at most this many runs', '50')
  .option('--json', 'print JSON', false)
  .action((options: { status?: string; since?: string; limit: string; json: boolean }) =>
    withClient('runs', undefined, undefined, async ({ ledger, link }) => {
      const filter = parseOrThrow(RunsFilter, options, 'options');
      // A run whose record fails verification is named, not listed (nothing in it can be trusted).
      const damaged: { runId: string; error: string }[] = [];
      const runs = (await ledger.listRuns(filter.limit, { onDamaged: (runId, error) => damaged.push({ runId, error: error.message }) }))
        .filter((run) => (!filter.status || run.status === filter.status) && (!filter.since || run.createdAt >= filter.since))
        .map((run) => ({ runId: run.runId, agent: run.agent, status: run.status, steps: run.steps, dollars: run.costMicros / 1_000_000, createdAt: run.createdAt, execution: link(run.executionArn) }));
      for (const { runId, error } of damaged) err(`savepoint: run ${runId} is not listed: ${error} (savepoint verify ${runId})`);
      if (options.json) return printJson({ runs, ...(damaged.length > 0 && { damaged }) });
      out(runs.length === 0 ? 'no runs' : runs.map((run) => `${run.runId.padEnd(32)} ${run.status.padEnd(9)} ${String(run.steps).padStart(5)} steps  $${run.dollars.toFixed(4).padStart(9)}  ${run.createdAt}  ${run.execution}`).join('\n'));
    }),
  );

program
  .command('breakers')
  .description('the circuit breakers shared by all runs (the model provider, each agent\'s tools)')
  .option('--agent <name|path>', 'also show this agent\'s tools breaker (default: the running engine\'s agent)')
  .option('--json', 'print JSON', false)
  .action(async (options: { json: boolean; agent?: string }) => {
    const agent = await agentFor(options.agent);
    await withClient('breakers', options.agent, undefined, async ({ ledger }) => {
      const breaker = new CircuitBreaker(ledger, systemClock);
      const models = agent ? [agent.model, ...(agent.fallbackModel ? [agent.fallbackModel] : [])] : [];
      const names = [...models.map(modelBreaker), ...(agent ? [toolsBreaker(agent)] : [])];
      const states = await Promise.all(names.map((name) => breaker.state(name)));
      if (options.json) printJson({ breakers: states });
      else out(states.map(formatBreaker).join('\n'));
    });
  });

program
  .command('world')
  .description("what the agent's simulated world holds (e.g. the refunds the simulated provider paid)")
  .option('--agent <name|path>', AGENT_HELP, defaultAgent)
  .option('--world-data <file>', 'as for run')
  .option('--json', 'print JSON', false)
  .action(async (options: { json: boolean; agent?: string; worldData?: string }) => {
    const engine = await runningEngine(stateDir());
    if (engine) throw new UsageError(`an engine (pid ${engine.pid}) owns ${stateDir()} and its world (${JSON.stringify(engine.endpoints)}); ask again when it stops`);
    const agent = await agentFor(options.agent, undefined, null);
    if (!agent?.dev?.world) throw new UsageError(`${agent ? `agent ${agent.name} has` : 'name an agent with --agent: this one has'} no simulated world`);
    // Reading the world makes no state directory; while it is open, this process owns the directory.
    if (!existsSync(stateDir())) throw new UsageError(`no state directory ${stateDir()}: run \`savepoint run\` first (or pass --state-dir)`);
    const ownership = await ownStateDir(stateDir(), 'world');
    const world = await agent.dev
      .world({ stateDir: stateDir(), dataFile: worldDataOf(stateDir(), options.worldData).path, failRate: 0, seed: 1, now: () => new Date() })
      .catch(async (error: unknown) => {
        await ownership.release();
        throw error;
      });
    for (const note of world.notes ?? []) err(`savepoint: warning: ${note}`);
    try {
      const seen = (await world.inspect?.()) ?? { lines: ['(this world shows nothing)'], json: {} };
      if (options.json) printJson(seen.json);
      else out(seen.lines.join('\n'));
    } finally {
      await world.close();
      await ownership.release();
    }
  });


registerConsoleCommand(program, stateDir, { out, err });

/** Runs `use` with the state directory's ledger (the running engine's, or opened here), then closes it. */
async function withLedger<T>(command: string, use: (opened: OpenLedger) => Promise<T>): Promise<T> {
  const opened = await openLedger(stateDir(), command);
  try {
    return await use(opened);
  } finally {
    await opened.close();
  }
}

/** What a command works on: a client, the ledger behind it, and whether decisions reach a live execution at once. */
interface Target {
  client: SavepointClient;
  ledger: Ledger;
  live: boolean;
  /** The running local engine, when the command reaches one. */
  engine?: EngineFile;
  /** A link to watch an execution (the AWS console's, on a deployed stack). */
  link: (executionArn: string) => string;
}

/**
 * Runs `use` with a client of the deployed stack (`--stack`), or of the state directory: there,
 * decisions go through the running engine's approval API (the waiting execution resumes), or,
 * with no engine running, are recorded in the ledger and delivered when the run resumes.
 */
async function withClient<T>(command: string, agentSpec: string | undefined, runId: string | undefined, use: (target: Target) => Promise<T>): Promise<T> {
  const { stack, region } = deployed();
  if (stack) {
    // The AWS clients load only for a deployed stack: a local command does not pay their memory.
    const { describeDeployment, deploymentClient, executionConsoleLink } = await import('../client/aws.js');
    const deployment = await describeDeployment({ stackName: stack, region, agent: agentSpec && !agentSpec.includes('/') ? agentSpec : undefined });
    const agent = await agentFor(agentSpec, deployment.agentName, null);
    const { client, ledger, close } = deploymentClient(deployment, agent);
    try {
      return await use({ client, ledger, live: true, link: (arn) => executionConsoleLink(deployment.region, arn) });
    } finally {
      close();
    }
  }
  return withLedger(command, async (opened) => {
    const run = runId ? await opened.ledger.getRun(runId) : undefined;
    const agent = await agentFor(agentSpec, run?.agent, opened.engine ?? null);
    const decide = opened.engine ? approvalApiDecider(opened.engine.endpoints.approvals) : undefined;
    // The running engine's Step Functions API, for what starts executions (`migrate`): the run's own state machine.
    const sfn = opened.engine && run ? await engineSfnClient(opened.engine) : undefined;
    // Who decides is who runs this command: the local approval API, or the ledger here, records this machine's user.
    const ledgerDecisions = { identity: { id: localUser(), via: 'cli' as const }, decisionMac: localApprovalKeys(stateDir()).decisions, policy: { separationOfDuties: false } };
    const client = createClient({ ledger: opened.ledger, agent, ledgerDecisions, ...(decide && { decide }), ...(sfn && run && { sfn: sfn.client, stateMachineArn: sfn.stateMachineArnOf(run.executionArn) }) });
    try {
      return await use({ client, ledger: opened.ledger, live: Boolean(opened.engine), engine: opened.engine, link: (arn) => arn });
    } finally {
      sfn?.client.destroy();
    }
  });
}

/** The running engine's Step Functions client; the SDK loads only when a command reaches an engine. */
async function engineSfnClient(engine: EngineFile) {
  const [{ SFNClient }, { stateMachineArnOf }, { localAwsConfig }] = await Promise.all([
    import('@aws-sdk/client-sfn'),
    import('../lambdas/adapters/sfn.js'),
    import('../local/aws-config.js'),
  ]);
  return { client: new SFNClient({ ...localAwsConfig, endpoint: engine.endpoints.sfn }), stateMachineArnOf };
}

const RunsFilter = z.object({
  status: z.enum(['running', 'succeeded', 'stopped', 'killed', 'failed']).optional(),
  since: CalendarDate.optional(),
  limit: z.coerce.number().int().positive().max(1000),
});

/** One run's verification, as a line (and one more per failing record). */
function formatVerification(report: RunVerification): string {
  const checked = `${report.records} records (${report.turns} turns, ${report.calls} calls, ${report.approvals} approvals)`;
  if (report.problems.length === 0) return `${report.runId}: OK, ${checked} verify`;
  return [`${report.runId}: FAILED, ${checked} checked`, ...report.problems.map((problem) => `  ${problem}`)].join('\n');
}

/** Where the ledger is, for messages: the stack, or the state directory. */
const where = () => {
  const { stack } = deployed();
  return stack ? `stack ${stack}` : stateDir();
};

const cliUser = () => `cli:${process.env['USER'] ?? 'unknown'}`;

try {
  await program.parseAsync(process.argv);
} catch (error) {
  const invalid = error instanceof UsageError || (error instanceof Error && error.name === ErrorNames.InvalidInput);
  err(`savepoint: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = error instanceof StoppedBySignal ? error.exitCode : invalid ? 2 : 1;
}

