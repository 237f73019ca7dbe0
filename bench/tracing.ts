/**
 * `npm run bench -- --tracing [--steps 100] [--runs 7] [--json]`: what the live OpenTelemetry
 * export (spans and GenAI metrics) costs per agent step.
 *
 * The workload of the overhead benchmark (bench/overhead.ts): the refund reconciler on a day of N
 * agent steps, p = 0, the local stack in process with the embedded ledger in memory and the
 * simulated model. Four rows, interleaved run by run so that the machine's speed changes hit each
 * alike, each figure the median over the runs (after one warm-up run per row):
 *   - off: no tracing (the default when no OTEL_* variable is set);
 *   - protobuf, spans only: the spans without the metrics (OTEL_METRICS_EXPORTER=none);
 *   - protobuf / json: every turn, call, decision and the run's end exported by the official
 *     OTLP/HTTP exporters, spans and metrics, to a collector on loopback (a plain HTTP server
 *     answering 200, in another process so that its CPU is not the run's), each export awaited
 *     before the step returns.
 * ms per step is the run's wall time / N; CPU ms per step the process's CPU time / N. Each traced
 * row's `cpuShare` (the figure CI holds) is the median over the runs of its CPU added over the
 * tracing-off run of the same round, as a share of that run's.
 */
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { otlpSink } from '../lambdas/telemetry/export.js';
import type { SpanSink } from '../lambdas/telemetry/sink.js';
import { cachedTemplate } from '../local/template/cache.js';
import { benchStack, runOnce, type BenchStack } from './pipeline.js';
import { median } from './stats.js';
import { dayWithSteps } from './workload.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** The collector: answers every export with 200 and counts the requests (run as a child process). */
if (process.argv[2] === '--collector') {
  let requests = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      requests += 1;
      response.writeHead(200, { 'content-type': request.headers['content-type'] ?? 'application/json' }).end(request.headers['content-type']?.includes('json') ? '{}' : '');
    });
  });
  server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
  process.on('message', () => process.send?.({ requests }));
}

export async function tracingBenchmark(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, strict: false, options: { steps: { type: 'string', default: '100' }, runs: { type: 'string', default: '7' }, json: { type: 'boolean', default: false } } });
  const steps = Number(values.steps);
  const runs = Number(values.runs);
  if (!(steps > 0 && runs > 0)) throw new Error(`--steps and --runs must be positive numbers: got ${String(values.steps)} and ${String(values.runs)}`);
  const collector = fork(new URL(import.meta.url).pathname, ['--collector'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve) => collector.once('message', (message: { port: number }) => resolve(message.port)));
  const endpoint = `http://127.0.0.1:${port}`;
  const { day } = dayWithSteps(steps);
  // A traced row runs a traced deployment's template (its run ends read the conversation by the `traceRunEnd` grant).
  const templates = { off: await cachedTemplate('refund-reconciler'), traced: await cachedTemplate('refund-reconciler', { traced: true }) };
  const common = { headers: {}, serviceName: 'savepoint-bench', timeoutMs: 2_000 };
  const sink = (protocol: 'http/protobuf' | 'http/json', metrics = true): SpanSink =>
    otlpSink({ ...common, url: `${endpoint}/v1/traces`, protocol, content: false }, metrics ? { ...common, url: `${endpoint}/v1/metrics`, protocol, temporality: 'delta' } : undefined);
  const rows: { name: string; tracing: SpanSink | false }[] = [
    { name: 'off', tracing: false },
    { name: 'OTLP/HTTP protobuf, spans only', tracing: sink('http/protobuf', false) },
    { name: 'OTLP/HTTP protobuf', tracing: sink('http/protobuf') },
    { name: 'OTLP/HTTP JSON', tracing: sink('http/json') },
  ];
  const stacks: BenchStack[] = [];
  for (const row of rows) stacks.push(await benchStack({ day, template: templates[row.tracing ? 'traced' : 'off'], failRate: 0, seed: 1, worldInMemory: true, tracing: row.tracing }));
  const figures = rows.map(() => ({ wall: [] as number[], cpu: [] as number[] }));
  try {
    for (let index = 0; index <= runs; index++) {
      for (const [row, stack] of stacks.entries()) {
        const attempt = await runOnce(stack, `bench-tracing-${row}-${index}`, day);
        if (attempt.status !== 'SUCCEEDED' || attempt.steps !== steps) throw new Error(`${rows[row]!.name}: run ${index} ${attempt.status} after ${attempt.steps} steps, expected ${steps}`);
        if (index === 0) continue; // the warm-up
        figures[row]!.wall.push(attempt.wallMs / steps);
        figures[row]!.cpu.push(attempt.cpuMs / steps);
      }
    }
  } finally {
    for (const stack of stacks) await stack.close();
  }
  collector.send('count');
  const exported = await new Promise<number>((resolve) => collector.once('message', (message: { requests: number }) => resolve(message.requests)));
  collector.kill();
  for (const row of rows) if (row.tracing) await row.tracing.shutdown();
  const table = rows.map((row, index) => ({ tracing: row.name, msPerStep: median(figures[index]!.wall), cpuMsPerStep: median(figures[index]!.cpu) }));
  const off = table[0]!;
  // The share held in CI: each run's CPU against the run with tracing off just before it, the median
  // of those pairs. A machine whose speed drifts over the seconds of the benchmark moves both runs
  // of a pair alike, where it moves two medians taken apart (the difference of medians swung
  // 1.07-1.71 in three runs of CI's old 20-step form on the same code, and 2.14 once on CI).
  const pairedShare = (row: number) => median(figures[row]!.cpu.map((cpu, index) => (cpu - figures[0]!.cpu[index]!) / figures[0]!.cpu[index]!));
  const added = table.slice(1).map((row, index) => ({ tracing: row.tracing, msPerStep: row.msPerStep - off.msPerStep, cpuMsPerStep: row.cpuMsPerStep - off.cpuMsPerStep, cpuShare: pairedShare(index + 1) }));
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ steps, runs, exportRequests: exported, rows: table, addedPerStep: added }, null, 2)}\n`);
    return;
  }
  process.stdout.write(`${steps} agent steps, ${runs} runs per row (median), ${exported} export requests received\n`);
  process.stdout.write('tracing                          ms/step   CPU ms/step   vs off\n');
  for (const row of table) {
    const versus = row.msPerStep / table[0]!.msPerStep;
    process.stdout.write(`${row.tracing.padEnd(32)} ${row.msPerStep.toFixed(3).padStart(7)}   ${row.cpuMsPerStep.toFixed(3).padStart(11)}   ${versus.toFixed(2)}×\n`);
  }
}
