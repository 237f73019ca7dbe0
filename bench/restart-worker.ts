/**
 * A worker process of the restart-from-scratch baseline: completed runs until the deadline, one
 * JSON line each. The baseline is long (thousands of step executions per run at N = 200) and its
 * runs are independent, so the benchmark runs one worker per core.
 */
import { readFileSync } from 'node:fs';
import { Day } from '../agents/refund-reconciler/domain.js';
import { benchStack, restartRun } from './pipeline.js';
import { withoutRetries } from './variant.js';

const job = JSON.parse(process.argv[2] ?? '{}') as { dayFile: string; templateFile: string; p: number; seed: number; deadline: number; worker: number };
const day = Day.parse(JSON.parse(readFileSync(job.dayFile, 'utf8')));
// The restart baseline must not be rescued by the recovery rule: it is turned off.
const stack = await benchStack({ day, template: withoutRetries(JSON.parse(readFileSync(job.templateFile, 'utf8'))), failRate: job.p, seed: job.seed, recovery: false });
try {
  // A run that has started is always finished: stopping mid-run would drop the longest runs.
  for (let index = 1; Date.now() < job.deadline; index++) {
    process.stdout.write(`${JSON.stringify(await restartRun(stack, day, `restart-w${job.worker}-${index}`))}\n`);
  }
} finally {
  await stack.close();
}
