/**
 * One engine process of the benchmark's crash scenario: starts the local pipeline on a state
 * directory with crash injection, starts (or resumes) the run, and prints how it ended. The crash
 * injection, or the benchmark from outside, may end it with SIGKILL at any moment; the next
 * process resumes the run from the ledger. Every Task event goes to `<stateDir>/history.jsonl`, so
 * the Lambda invocations of dead processes are counted too, and CallModel's invocations that made no
 * step to `<stateDir>/decisions.jsonl`.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Day } from '../agents/refund-reconciler/domain.js';
import { crashInjector } from '../local/runtime/crash.js';
import { historyLog } from '../local/engine/history-log.js';
import { BENCH_CONFIG, benchStack, decisionOnlyCounter } from './pipeline.js';

interface Job {
  stateDir: string;
  dayFile: string;
  templateFile: string;
  runId: string;
  failRate: number;
  seed: number;
  crashRate: number;
}

const job = JSON.parse(process.argv[2] ?? '{}') as Job;
const day = Day.parse(JSON.parse(readFileSync(job.dayFile, 'utf8')));
const stack = await benchStack({
  day,
  template: JSON.parse(readFileSync(job.templateFile, 'utf8')),
  stateDir: job.stateDir,
  failRate: job.failRate,
  seed: job.seed,
  crash: crashInjector({ rate: job.crashRate, seed: job.seed, logFile: join(job.stateDir, 'crashes.jsonl') }),
});
try {
  stack.engine.on(historyLog(join(job.stateDir, 'history.jsonl')));
  // CallModel's invocations that made no step (pipeline.ts), one line each time an entry of them
  // ends, as it happens (synchronous: the process may be killed right after).
  const decisions = decisionOnlyCounter();
  stack.engine.on((event) => {
    const invocations = decisions.feed(event);
    if (invocations > 0) appendFileSync(join(job.stateDir, 'decisions.jsonl'), `${JSON.stringify({ invocations })}\n`);
  });
  process.stderr.write(`engine ${process.pid} running\n`);
  // A new execution with the run's id: StartRun creates the run, or resumes it where it stopped.
  const { executionArn } = stack.engine.startExecution({
    name: `${job.runId}-${Date.now().toString(36)}`,
    input: { runId: job.runId, input: { date: day.date }, config: BENCH_CONFIG },
  });
  const done = await stack.engine.waitForExecution(executionArn);
  const run = await stack.ledger.getRun(job.runId);
  process.stdout.write(`${JSON.stringify({ status: done.status, run: run?.status, steps: run?.steps })}\n`);
} finally {
  await stack.close();
}
