/**
 * `npm run bench -- --help`: every mode and the options it reads, with their defaults. Each mode
 * parses its own options (`parseArgs` in its module); test/unit/bench-help.test.ts keeps this
 * table whole against those sources.
 */
export const BENCH_HELP: readonly { readonly mode: string; readonly what: string; readonly options: readonly (readonly [string, string])[] }[] = [
  {
    mode: '(no mode)',
    what: 'the waste benchmark: checkpoint vs restart vs crashes',
    options: [
      ['--steps <list>', 'agent steps per run, comma-separated (default 100,200)'],
      ['--p <rate>', 'chance of a transient failure per step (default 0.02)'],
      ['--runs <n>', 'runs per row (default 30)'],
      ['--restart-seconds <s>', 'time budget of the restart baseline (default 120)'],
      ['--crash-runs <n>', 'runs with real process crashes (default 4)'],
      ['--crash-rate <rate>', 'chance of a crash per step in those runs (default 0.005)'],
      ['--workers <n>', 'processes running the restart baseline side by side (default: cores, at most 4)'],
      ['--seed <n>', 'the random seed (default 1)'],
    ],
  },
  {
    mode: '--overhead',
    what: "the harness's cost per agent step, and its AWS bill per run",
    options: [
      ['--steps <n>', 'steps per run (default 100)'],
      ['--runs <n>', 'runs per row (default 10)'],
      ['--ledgers <list>', 'ledgers to measure (default memory,disk,dynalite)'],
    ],
  },
  {
    mode: '--deploy',
    what: 'CloudFormation resources and idle dollars a month per agent added to a stack, and the synthesis time of a many-agent app',
    options: [
      ['--agents <n>', 'agents of the nested-stack app (default 20)'],
      ['--per-nested <n>', 'agents to a nested stack, agentsInNestedStacks (default 4)'],
    ],
  },
  { mode: '--cost', what: 'model dollars of the sample day with prompt caching and without', options: [] },
  {
    mode: '--longruns',
    what: 'input tokens with and without compaction, history events per execution',
    options: [
      ['--calls <n>', 'tool calls in the long run (default 120)'],
      ['--threshold <n>', 'history events before a handoff (default 600)'],
    ],
  },
  {
    mode: '--ledger',
    what: "each ledger's milliseconds per agent step, alone",
    options: [
      ['--steps <n>', 'steps per repetition (default 100)'],
      ['--reps <n>', 'repetitions (default 10)'],
    ],
  },
  {
    mode: '--fleet <n>',
    what: 'n concurrent runs on a simulated clock, the API quotas on (default 1000)',
    options: [
      ['--steps <n>', 'steps per run (default 100)'],
      ['--offered <n>', 'starts offered per second (default 200)'],
      ['--seed <n>', 'the random seed (default 1)'],
      ['--model-ms <ms>', 'median latency of a model call, p95 8/3 of it (default 1500)'],
      ['--lambda-concurrency <n>', "the account's Lambda concurrency (default 1000)"],
      ['--budget-dollars <n>', "the model's fleet budget a day (default: twice what the fleet spends)"],
      ['--lease-dollars <n>', 'the chunk a run leases from the fleet budget (default 0.05, the deployed default)'],
      ['--model', "model each run's AWS calls instead of running the handlers (bench/fleet-model.ts): 10,000 runs in seconds"],
      ['--agree', 'the handlers and the model on the same parameters, and whether they agree'],
    ],
  },
  {
    mode: '--growth',
    what: 'a long-lived state directory: engine heap per run, `status` with 1 and N runs',
    options: [
      ['--runs <n>', 'runs kept in the state directory (default 150)'],
      ['--steps <n>', 'steps per run (default 10)'],
      ['--reps <n>', 'repetitions of each measure (default 5)'],
      ['--heap-snapshots <dir>', 'write heap snapshots there (default none)'],
    ],
  },
  { mode: '--replay', what: "`savepoint replay`'s CPU against the run's, on the sample day: in process, and each as a user runs it", options: [['--replays <n>', 'replays (default 5)']] },
  {
    mode: '--tracing',
    what: 'what the live OpenTelemetry export costs per step, on and off',
    options: [
      ['--steps <n>', 'steps per run (default 100)'],
      ['--runs <n>', 'runs per row (default 7)'],
    ],
  },
  {
    mode: '--events',
    what: "subscribers of a run's event stream: engine CPU added, write-to-delivery delay, resume after disconnects",
    options: [
      ['--steps <n>', 'steps per run (default 100)'],
      ['--runs <n>', 'runs per row (default 5)'],
      ['--subscribers <n>', 'streams of each followed run (default 100)'],
      ['--disconnects <n>', 'random disconnects of the resume check, at least (default 50)'],
    ],
  },
  {
    mode: '--suite',
    what: "`npm test`'s CPU (its processes' included) against a fixed workload's, measured before and after it",
    options: [['--batches <n>', 'batches of the fixed workload before the suite and after it (default 3)']],
  },
  {
    mode: '--cold-start',
    what: 'bundle size and import CPU of each Lambda function',
    options: [
      ['--agent <path>', "the agent's module (default the refund reconciler)"],
      ['--runs <n>', 'imports measured per function (default 5)'],
    ],
  },
];

/** The help text: usage, then each mode with its options. */
export function benchHelp(): string {
  const lines = ['Usage: npm run bench -- [<mode>] [options] [--json]', '', 'One benchmark per mode; --json prints its figures for bench/check.ts.', ''];
  for (const { mode, what, options } of BENCH_HELP) {
    lines.push(`${mode}  ${what}`);
    for (const [option, help] of options) lines.push(`    ${option.padEnd(24)}${help}`);
  }
  lines.push('', 'Every mode:', `    ${'--json'.padEnd(24)}print the figures as JSON`, `    ${'--help'.padEnd(24)}print this help`);
  return lines.join('\n');
}
