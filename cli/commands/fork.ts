import type { Command } from 'commander';
import { Option } from 'commander';
import { z } from 'zod';
import type { ForkRequest } from '../../lambdas/runs/fork.js';
import { modelSpecOf } from '../../lambdas/runs/run-request.js';
import { parseOrThrow } from '../../lambdas/shared/validation.js';
import { parseOptions, UsageError, wholeNumberOption } from '../errors.js';
import { engineOptions } from '../options.js';
import { deployed, err, out, printJson, printReport, stateDir } from '../program.js';
import { agentFor, holderDir, noRunError, recordedAgent, servingEngine, where, withClient } from '../target.js';
import { runAndReport, waitUnlessStopped, whatServeTakes } from './run.js';
import { watchStopSignals } from '../signals.js';

/**
 * `savepoint fork <runId> --at <turn>`: a new run whose first turns are the parent's, then live
 * (lambdas/runs/fork.ts) — on the code `--agent` names, with an edited `--input`, `--model` or
 * `--result` if asked. The hazard report (what the fork may write, what it changes) comes first.
 */
export function registerForkCommand(program: Command): void {
  program
    .command('fork <runId>')
    .description("starts a new run from a run's ledger: its turns before --at copied without any call, then live on this code; prints the hazard report first")
    .requiredOption('--at <turn>', 'the fork\'s first turn of its own')
    .option('--run-id <id>', 'the fork\'s run id (default: <runId>-fork-<turn>)')
    .addOption(new Option('--effects <mode>', 'reuse: a write the parent made is answered from its record; dry: no write is sent').choices(['reuse', 'dry']).default('reuse'))
    .option('--fresh-budget', 'the fork\'s budgets count only its own work (default: it inherits what the parent spent)', false)
    .option('--input <json|file>', "the fork's input instead of the parent's (its first message changes; the copied turns stay)")
    .option('--model <provider:model-id>', "the model of the fork's own turns instead of the parent's")
    .option('--result <call=json>', "the result of call <call> of turn at-1 as the fork's first turn shows it to the model, instead of the recorded one (repeatable)", (value: string, all: string[] = []) => [...all, value])
    .option('--yes', 'start without asking (the hazard report is still printed)', false)
    .addOption(engineOptions.agent())
    .addOption(engineOptions.failRate())
    .addOption(engineOptions.seed())
    .addOption(engineOptions.approve())
    .addOption(engineOptions.json())
    .addOption(engineOptions.worldData({ brief: true }))
    .addOption(engineOptions.template())
    .addOption(engineOptions.crashAt({ brief: true }))
    .addOption(engineOptions.crashRate({ brief: true }))
    .addOption(engineOptions.crashSeed({ brief: true }))
    .addOption(engineOptions.wait())
    .action(async (parentId: string, options: { at: string; runId?: string; effects: 'reuse' | 'dry'; freshBudget: boolean; yes: boolean; agent?: string; input?: string; model?: string; result?: string[] } & Record<string, unknown>) => {
      const { at } = parseOptions(z.object({ at: wholeNumberOption(z.number().min(1, { error: (issue) => `expected a turn number (1 or more), not ${String(issue.input)}` })) }), options);
      const results = (options.result ?? []).map((spec) => editedResult(spec));
      const { editedPrefix, forkChanges, forkPrefix, hazardReport, ForkRequest } = await import('../../lambdas/runs/fork.js');
      const fork = parseOrThrow(ForkRequest(), { from: parentId, at, effects: options.effects, ...(options.freshBudget && { freshBudget: true }), ...(results.length > 0 && { results }) }, 'fork');
      // What the command line asks that StartRun would refuse, refused before the report and before anything starts.
      if (options.runId === parentId) throw new UsageError(`--run-id: a fork needs a run id of its own, not its parent's (${parentId})`);
      if (options.model !== undefined) modelSpecOf(options.model, '--model');
      if (deployed().stack) return forkOnStack(parentId, options, fork);
      // Read the parent and report before the engine owns the state directory.
      const { parent, changes, dir } = await withClient('fork', options.agent, parentId, async ({ ledger, engine, parts }) => {
        const run = await ledger.getRun(parentId);
        if (!run) throw await noRunError(parentId, { ledger, parts });
        const agent = await agentFor(options.agent, run.agent, engine ?? null);
        const { runInput } = await import('../run.js');
        const input = options.input === undefined ? run.input : runInput(options.input, undefined, run.agent);
        if (agent && options.input !== undefined) parseOrThrow(agent.input, input, `--input of agent ${agent.name}`);
        const conversation = await ledger.listConversation(parentId);
        // StartRun's own checks of --at and --result, made before the hazard report: a fork the engine
        // would refuse is refused here, naming why, with no report of a turn the run never had.
        const typed = { from: 'runId', at: '--at', results: '--result', result: (_index: number, call: number) => `--result ${call}` };
        editedPrefix(forkPrefix({ run, ...conversation }, fork.at, typed), fork, typed);
        const changes = agent ? forkChanges(run, { agent, input, ...(options.model && { model: options.model }), fork }) : [];
        // The fork runs where its parent's records are (StartRun copies them): with several agents, its agent's directory.
        const dir = await holderDir(parts, parentId);
        return { parent: { run, calls: conversation.calls, input }, changes, dir };
      });
      // Its parent's agent as `status` and `replay` find it: by name, or the module it ran from here.
      const agent = options.agent ?? recordedAgent(dir ?? stateDir(), parent.run.agent);
      // When `savepoint serve` owns the directory, it starts the fork (runAndReport hands it over):
      // what it cannot take is refused before the report, not after it.
      const serving = await servingEngine(dir ?? stateDir());
      if (serving) whatServeTakes({ ...options, agent }, serving.engine);
      (options['json'] ? err : out)(hazardReport(parent.calls, fork, changes).join('\n'));
      if (!(await confirmed(options.yes, fork.effects))) return out('not started');
      await runAndReport({
        ...options,
        agent,
        runId: options.runId ?? `${parentId}-fork-${at}`.slice(0, 80),
        input: JSON.stringify(parent.input),
        fork,
        memory: false,
        ...(dir && { stateDir: dir }),
      });
    });
}

/**
 * A fork on a deployed stack: its ledger read for the hazard report, then a `StartExecution` of the
 * stack's state machine with `fork` in the run request (its StartRun copies the prefix). It says
 * where to watch the fork, or with --wait, waits for it and reports it like `run --stack --wait`.
 */
async function forkOnStack(parentId: string, options: { runId?: string; yes: boolean; agent?: string; input?: string; model?: string; json?: unknown; wait?: unknown }, fork: ForkRequest) {
  await withClient('fork', options.agent, parentId, async ({ client, link }) => {
    const { runInput } = await import('../run.js');
    const request = {
      at: fork.at,
      effects: fork.effects,
      ...(fork.freshBudget && { freshBudget: true }),
      ...(fork.results && { results: fork.results }),
      ...(options.runId && { runId: options.runId }),
      ...(options.input !== undefined && { input: runInput(options.input, undefined, 'the fork') }),
      ...(options.model && { model: options.model }),
    };
    (options.json ? err : out)((await client.forkReport(parentId, request)).join('\n'));
    if (!(await confirmed(options.yes, fork.effects))) return out('not started');
    const started = await client.fork(parentId, request);
    const where = { runId: started.runId, executionArn: started.executionArn, execution: link(started.executionArn) };
    if (!options.wait) return options.json ? printJson(where) : out(`fork ${where.runId} started: ${where.execution}`);
    const progress = options.json ? err : out;
    // Caught before the line that says it waits: Ctrl-C stops the waiting, not the fork.
    const signals = watchStopSignals();
    progress(`fork ${where.runId} started: ${where.execution}; waiting for it (Ctrl-C stops waiting, not the run)…`);
    const view = await waitUnlessStopped(client, started.runId, signals, { who: `stack ${deployed().stack}`, say: progress });
    if (!view) return;
    if (options.json) printJson({ ...view.report, ...where });
    else printReport(view.report);
  });
}

/** A `reuse` fork in a terminal asks before it starts (`--yes` does not); a dry one sends nothing. */
async function confirmed(yes: boolean, effects: ForkRequest['effects']): Promise<boolean> {
  if (yes || !process.stdin.isTTY || effects !== 'reuse') return true;
  // Loaded only to ask: no other command's start pays for node:readline.
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  const answer = await rl.question('start the fork? [y/N] ');
  rl.close();
  return /^y(es)?$/i.test(answer.trim());
}

/** `--result 2={"status":"refunded"}`: call 2 of the last copied turn, shown to the model with this JSON. */
function editedResult(spec: string): { call: number; result: unknown } {
  const match = /^(\d+)=(.+)$/s.exec(spec);
  if (!match) throw new UsageError(`--result: expected <call>=<json>, e.g. 1='{"status":"refunded"}', not ${spec}`);
  try {
    return { call: Number(match[1]), result: JSON.parse(match[2]!) as unknown };
  } catch (error) {
    throw new UsageError(`--result ${match[1]}: the result is not JSON (${(error as Error).message})`);
  }
}
