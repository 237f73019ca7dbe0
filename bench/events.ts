/**
 * `npm run bench -- --events [--steps 100] [--runs 5] [--subscribers 100] [--disconnects 50] [--json]`:
 * what following runs' events (`GET /v1/runs/{id}/events`) costs the engine, how late the events
 * arrive, and whether a resumed stream loses or repeats any.
 *
 * The workload of the overhead benchmark: the refund reconciler on a day of N agent steps, p = 0,
 * the local stack in this process (embedded ledger, simulated model). Two rows, interleaved run by
 * run so that the machine's speed changes hit both alike, each figure the median over the runs
 * (after one warm-up run per row):
 *   - 0 subscribers: the run alone;
 *   - S subscribers: S streams of the run opened at once by another process (bench/event-subscribers.ts:
 *     their CPU is not the engine's), from the run's start to its last event.
 * CPU ms per step is this process's CPU time over the run (to its last delivery) / N; the added
 * share is (with − without) / without. The delivery delay is from a record's write (its
 * `recordedAt`) to the event's arrival at a subscriber, over every subscriber's model turns and
 * tool results, printed beside the step time (ms per step) it is measured against, and as a
 * number of steps (held by bench/check.ts).
 *
 * Resume: runs followed through a proxy that cuts each connection after a random number of bytes
 * (mid-frame, mid-header), until at least D cuts; the events the client yielded, against the run's
 * list read from the ledger: lost and duplicated counted.
 */
import { fork } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';
import { parseArgs } from 'node:util';
import { followEvents, type RunEvent } from '../client/events.js';
import { readRunRecords, settledEvents } from '../lambdas/runs/events.js';
import { cachedTemplate } from '../local/template/cache.js';
import { seededRandom } from '../sim/random.js';
import { BENCH_CONFIG, benchStack, type BenchStack } from './pipeline.js';
import { median } from './stats.js';
import { dayWithSteps } from './workload.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const { values } = parseArgs({
  args: process.argv.slice(2),
  strict: false,
  options: { steps: { type: 'string', default: '100' }, runs: { type: 'string', default: '5' }, subscribers: { type: 'string', default: '100' }, disconnects: { type: 'string', default: '50' }, json: { type: 'boolean', default: false } },
});
const steps = Number(values.steps);
const runs = Number(values.runs);
const subscribers = Number(values.subscribers);
const disconnects = Number(values.disconnects);
if (!(steps >= 10 && runs > 0 && subscribers > 0 && disconnects > 0)) throw new Error('--steps (≥ 10), --runs, --subscribers and --disconnects must be positive numbers');

const { day } = dayWithSteps(steps);
const stack = await benchStack({ day, template: await cachedTemplate('refund-reconciler'), failRate: 0, seed: 1, worldInMemory: true });
const runsUrl = new URL(stack.endpoints.runs);
const endpoint = { url: runsUrl.origin, credential: runsUrl.pathname.split('/')[1]! };
const child = fork(new URL('./event-subscribers.ts', import.meta.url).pathname, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
await new Promise<void>((resolve) => child.once('message', () => resolve()));

type Reply = { done: { delays: number[]; events: number[] } } | { failed: string };

/** One run of the workload, with `followers` subscribers from its start; CPU and wall time to its last delivery. */
async function followedRun(runId: string, followers: number) {
  stack.world.payments.resetWorld(day);
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const { executionArn } = stack.engine.startExecution({ name: runId, input: { runId, input: { date: day.date }, config: BENCH_CONFIG } });
  let delivered: Promise<Reply> | undefined;
  if (followers > 0) {
    // Subscribed as soon as the run exists (StartRun's first write), before its first turn.
    while (!(await stack.ledger.getRun(runId))) await new Promise<void>((resolve) => setTimeout(resolve, 1));
    delivered = new Promise<Reply>((resolve) => child.once('message', (reply: Reply) => resolve(reply)));
    child.send({ follow: { ...endpoint, runId, subscribers: followers } });
  }
  const done = await stack.engine.waitForExecution(executionArn);
  const wallMs = performance.now() - started;
  const reply = await delivered;
  const cpu = process.cpuUsage(cpuBefore);
  const run = await stack.ledger.getRun(runId);
  if (done.status !== 'SUCCEEDED' || run?.steps !== steps) throw new Error(`run ${runId} ${done.status} after ${run?.steps} steps, expected ${steps}`);
  if (reply && 'failed' in reply) throw new Error(`subscribers of ${runId} failed: ${reply.failed}`);
  const events = settledEvents((await readRunRecords(stack.ledger, runId))!).length;
  if (reply && reply.done.events.some((count) => count !== events)) throw new Error(`a subscriber of ${runId} got ${reply.done.events.find((count) => count !== events)} events of ${events}`);
  return { msPerStep: wallMs / steps, cpuMsPerStep: (cpu.user + cpu.system) / 1000 / steps, delays: reply?.done.delays ?? [], events };
}

/** Runs followed through a proxy that cuts connections at random bytes, until `disconnects` cuts. */
async function resumeAfterCuts(stackToFollow: BenchStack) {
  const random = seededRandom(33);
  let cuts = 0;
  const sockets = new Set<Socket>();
  const proxy = createServer((client) => {
    const upstream = connect(Number(runsUrl.port), '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    // Up to 6 KB: a connection must be able to carry the largest event (a tool result up to 4 KB) now and then, or no client could progress.
    let budget = 40 + Math.floor(random() * 6000);
    upstream.on('data', (chunk: Buffer) => {
      if (chunk.length < budget) return void ((budget -= chunk.length), client.write(chunk));
      client.write(chunk.subarray(0, budget));
      cuts += 1;
      client.destroy();
      upstream.destroy();
    });
    client.on('data', (chunk) => upstream.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', () => resolve()));
  const through = { url: `http://127.0.0.1:${(proxy.address() as { port: number }).port}`, credential: endpoint.credential };
  let lost = 0;
  let duplicated = 0;
  let events = 0;
  let followed = 0;
  try {
    while (cuts < disconnects) {
      if (followed >= 200) throw new Error(`only ${cuts} cuts in ${followed} runs`);
      const runId = `bench-events-resume-${followed++}`;
      stackToFollow.world.payments.resetWorld(day);
      const { executionArn } = stackToFollow.engine.startExecution({ name: runId, input: { runId, input: { date: day.date }, config: BENCH_CONFIG } });
      while (!(await stackToFollow.ledger.getRun(runId))) await new Promise<void>((resolve) => setImmediate(resolve));
      const got: RunEvent[] = [];
      for await (const event of followEvents(through, runId, { retryMs: 1, maxAttempts: 10_000 })) got.push(event);
      await stackToFollow.engine.waitForExecution(executionArn);
      const all = settledEvents((await readRunRecords(stackToFollow.ledger, runId))!).map((event) => JSON.stringify(event));
      const yielded = got.map((event) => JSON.stringify(event));
      const seen = new Set(yielded);
      lost += all.filter((event) => !seen.has(event)).length;
      duplicated += yielded.length - seen.size;
      events += all.length;
    }
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => proxy.close(() => resolve()));
  }
  return { disconnects: cuts, runs: followed, events, lost, duplicated };
}

const figures = { alone: { wall: [] as number[], cpu: [] as number[] }, followed: { wall: [] as number[], cpu: [] as number[] } };
const delays: number[] = [];
let eventsPerRun = 0;
let resume: Awaited<ReturnType<typeof resumeAfterCuts>>;
try {
  for (let index = 0; index <= runs; index++) {
    const alone = await followedRun(`bench-events-alone-${index}`, 0);
    const followed = await followedRun(`bench-events-followed-${index}`, subscribers);
    eventsPerRun = followed.events;
    if (index === 0) continue; // the warm-up
    figures.alone.wall.push(alone.msPerStep);
    figures.alone.cpu.push(alone.cpuMsPerStep);
    figures.followed.wall.push(followed.msPerStep);
    figures.followed.cpu.push(followed.cpuMsPerStep);
    delays.push(...followed.delays);
  }
  resume = await resumeAfterCuts(stack);
} finally {
  child.kill();
  await stack.close();
}

const sorted = [...delays].sort((a, b) => a - b);
const quantile = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const rows = [
  { subscribers: 0, msPerStep: median(figures.alone.wall), cpuMsPerStep: median(figures.alone.cpu) },
  { subscribers, msPerStep: median(figures.followed.wall), cpuMsPerStep: median(figures.followed.cpu) },
];
const report = {
  steps,
  runs,
  subscribers,
  eventsPerRun,
  rows,
  addedCpuShare: (rows[1]!.cpuMsPerStep - rows[0]!.cpuMsPerStep) / rows[0]!.cpuMsPerStep,
  delivery: { samples: sorted.length, medianMs: quantile(0.5), p99Ms: quantile(0.99), stepMs: rows[1]!.msPerStep },
  resume,
};
if (values.json) {
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} else {
  process.stdout.write(`${steps} agent steps, ${runs} runs per row (median), ${eventsPerRun} events per run\n`);
  process.stdout.write('subscribers   ms/step   CPU ms/step\n');
  for (const row of rows) process.stdout.write(`${String(row.subscribers).padStart(11)}   ${row.msPerStep.toFixed(3).padStart(7)}   ${row.cpuMsPerStep.toFixed(3).padStart(11)}\n`);
  process.stdout.write(`CPU added by ${subscribers} subscribers: ${(report.addedCpuShare * 100).toFixed(1)}% per step (bound 10%)\n`);
  process.stdout.write(`write → delivery: median ${report.delivery.medianMs} ms, p99 ${report.delivery.p99Ms} ms over ${sorted.length} deliveries (a step takes ${report.delivery.stepMs.toFixed(2)} ms: the median is ${(report.delivery.medianMs / report.delivery.stepMs).toFixed(1)} steps)\n`);
  process.stdout.write(`resume after ${resume.disconnects} random disconnects over ${resume.runs} run(s), ${resume.events} events: ${resume.lost} lost, ${resume.duplicated} duplicated\n`);
}
