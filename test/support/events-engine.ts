/**
 * An engine process for the run event stream's crash test: the local stack on a state directory,
 * serving the runs API's events route; it publishes its address and credential in
 * `<stateDir>/events-endpoint.json` (as `serve` publishes its own in the state directory), starts
 * the run — or, when an earlier process died with it, resumes it (the watchdog) — and serves until
 * SIGTERM. The test SIGKILLs it mid-run and starts another.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startLocalStack } from '../../local/runtime/local-stack.js';
import { eventFollower } from './event-follower.js';

const job = JSON.parse(process.argv[2] ?? '{}') as { stateDir: string; runId: string };
const stack = await startLocalStack({ agent: eventFollower, stateDir: job.stateDir, retryDelayMs: 1 });
const runs = new URL(stack.endpoints.runs);
const file = join(job.stateDir, 'events-endpoint.json');
writeFileSync(`${file}.tmp`, JSON.stringify({ url: runs.origin, credential: runs.pathname.split('/')[1] }));
renameSync(`${file}.tmp`, file);
if (!(await stack.ledger.getRun(job.runId))) {
  stack.engine.startExecution({ name: `${job.runId}-${Date.now().toString(36)}`, input: { runId: job.runId, input: { turns: 12 } } });
} else {
  const resumed = await stack.recoverOrphans();
  process.stderr.write(`watchdog: ${JSON.stringify(resumed)}\n`);
}
process.stdout.write(`engine ${process.pid} serving\n`);
process.on('SIGTERM', () => void stack.close().then(() => process.exit(0)));
