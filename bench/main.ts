/**
 * `npm run bench [-- --<mode>] [options] [--json]`: one benchmark per mode, each a module of its own.
 *   (no mode)    the waste benchmark: checkpoint vs restart vs crashes (bench/waste.ts)
 *   --overhead   the harness's cost per agent step, and its AWS bill per run (bench/overhead.ts)
 *   --cost       model dollars of the sample day with prompt caching and without (bench/cost.ts)
 *   --longruns   input tokens with and without compaction, events per execution (bench/longruns.ts)
 *   --ledger     each ledger's milliseconds per agent step, alone (bench/ledger.ts)
 *   --fleet <n>  n concurrent runs on a simulated clock, the API quotas on (bench/fleet.ts)
 *   --growth     a long-lived state directory: engine heap per run, `status` with 1 and N runs (bench/growth.ts)
 *   --replay     `savepoint replay`'s CPU against the run's, on the sample day: in process, and each as a user runs it (bench/replay.ts)
 *   --tracing    what the live OpenTelemetry export costs per step, on and off (bench/tracing.ts)
 *   --events     100 subscribers of a run's event stream: engine CPU added, delivery delay, resume (bench/events.ts)
 *   --cold-start bundle size and import CPU of each Lambda function (bench/cold-start.ts)
 *   --deploy     resources and idle dollars per agent added to a stack, and a 20-agent synth's time (bench/deploy.ts)
 *   --suite      the README's test command's CPU, against a fixed workload's before and after it (bench/suite.ts)
 * `bench/check.ts` validates each mode's `--json` (CI runs a short form of every mode through it).
 */
// Like bin/savepoint.js: the SDK's Node 20 notice is noise here (read when a client is created).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  const { benchHelp } = await import('./help.js');
  process.stdout.write(`${benchHelp()}\n`);
  process.exit(0);
}

const MODES = ['overhead', 'cost', 'longruns', 'ledger', 'fleet', 'growth', 'replay', 'tracing', 'events', 'deploy', 'suite'] as const;

// `--cold-start` runs bench/cold-start.ts (the module's own main), like the waste benchmark.
const mode = MODES.find((name) => process.argv.includes(`--${name}`)) ?? (process.argv.includes('--cold-start') ? 'cold-start' : 'waste');
if (mode === 'overhead') {
  const { overheadBenchmark } = await import('./overhead.js');
  await overheadBenchmark(process.argv.slice(2));
} else if (mode === 'tracing') {
  const { tracingBenchmark } = await import('./tracing.js');
  await tracingBenchmark(process.argv.slice(2));
} else if (mode === 'deploy') {
  const { deployBenchmark } = await import('./deploy.js');
  await deployBenchmark(process.argv.slice(2));
} else if (mode === 'fleet') {
  const { fleetBenchmark } = await import('./fleet.js');
  await fleetBenchmark(process.argv.slice(2));
} else {
  await import(`./${mode}.js`);
}
