import { Option } from 'commander';
import { CRASH_POINTS } from '../local/runtime/crash.js';
import { AGENT_HELP, defaultAgent } from './program.js';

/**
 * The options `run` and `resume` share (both start the local engine on a run), each defined
 * once. `resume` lists them in its own order and, where its help says "as for run", points at
 * `run`'s description (`brief`).
 */
type Brief = { readonly brief?: boolean };
const asForRun = (description: string, { brief }: Brief) => (brief ? 'as for run' : description);

/**
 * `option`, its default the value of the environment variable `variable` (an empty one is unset, as
 * `$SAVEPOINT_AGENT` is). Through commander's `env`, which records where the value came from: a bad
 * one is named as the variable the user set, not as the flag they did not type (cli/errors.ts `asTyped`).
 */
export function defaultFromEnv(option: Option, variable: string): Option {
  return process.env[variable] ? option.env(variable) : option;
}

export const engineOptions = {
  agent: () => new Option('--agent <name|path>', AGENT_HELP).default(defaultAgent),
  failRate: () => new Option('--fail-rate <p>', 'inject transient failures into model and provider requests, probability per request').default('0'),
  seed: () => new Option('--seed <n>', 'seed of the injected failures').default('1'),
  approve: () => new Option('--approve <mode>', 'how approvals are decided (default: prompt in a terminal, wait otherwise)').choices(['prompt', 'approve', 'reject', 'wait']),
  ledger: (brief: Brief = {}) =>
    new Option('--ledger <kind>', asForRun("the ledger: embedded (in this process) or dynalite (the DynamoDB ledger on the emulator); default: the state directory's, else embedded", brief)).choices(['embedded', 'dynalite']),
  worldData: (brief: Brief = {}) =>
    new Option('--world-data <file>', asForRun("a data file the agent's simulated world serves, e.g. the refund reconciler's day (default: the state directory's, else the agent's sample)", brief)),
  json: () => new Option('--json', 'print the report as JSON (progress goes to stderr)').default(false),
  crashAt: (brief: Brief = {}) => new Option('--crash-at <point[:tool][:nth]>', asForRun(`end the process with SIGKILL the nth time a step boundary is reached (${CRASH_POINTS.join(', ')})`, brief)),
  crashRate: (brief: Brief = {}) => new Option('--crash-rate <p>', asForRun('end the process with SIGKILL at any step boundary with this probability', brief)).default('0'),
  crashSeed: (brief: Brief = {}) => new Option('--crash-seed <n>', asForRun('seed of --crash-rate (default: --seed)', brief)),
  maxRecoveries: () => new Option('--max-recoveries <n>', 'automatic recoveries in a row without progress before a run is given up (default 3)'),
  durability: (brief: Brief = {}) =>
    new Option(
      '--durability <mode>',
      asForRun("when the ledger on disk acknowledges a write: async (in the OS's page cache: a killed process loses nothing, a power loss may lose the last writes) or sync (fdatasync'd: a power loss loses nothing acknowledged, ~0.3–0.4 ms a write); default async", brief),
    ).choices(['sync', 'async']),
  template: () => new Option('--template <file>', 'run this synthesized template (e.g. cdk.out/Savepoint.template.json) instead of synthesizing the stack'),
  wait: () => new Option('--wait', 'with --stack: wait for the run to finish and report it (Ctrl-C stops the waiting, not the run)').default(false),
  prices: (brief: Brief = {}) =>
    new Option(
      '--prices <file>',
      asForRun('a JSON file of model prices over the built-in table and the agent\'s `prices`: { "<provider:model>": { "inputPerMTok", "outputPerMTok", "cacheWritePerMTok", "cacheReadPerMTok" } }, dollars per million tokens (part of the run\'s fingerprint: resume with the same file)', brief),
    ),
  fleetBudget: (brief: Brief = {}) =>
    new Option(
      '--fleet-budget <file>',
      asForRun('a JSON file of the fleet budget every run of the agent shares, each model call reserved within it: { "agent": { "dollarsPerDay", "concurrentRuns" }, "stack": { … }, "whenSpent": "stop" | "wait", "leaseDollars" }', brief),
    ),
};
