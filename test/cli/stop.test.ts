import { SFNClient, StopExecutionCommand } from '@aws-sdk/client-sfn';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { localAwsConfig } from '../../local/services/aws-config.js';
import { cachedTemplate } from '../../local/template/cache.js';

/**
 * A stop from the Step Functions endpoint is a kill, as on AWS (the execution-stopped rule): the
 * run is recorded killed even when the process that drives it ends right after, and the next
 * engine's watchdog does not resume it.
 */

const bin = new URL('../../bin/savepoint.js', import.meta.url).pathname;
const exec = promisify(execFile);
const root = mkdtempSync(join(tmpdir(), 'savepoint-stop-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const env = { ...process.env, SAVEPOINT_AGENT: 'refund-reconciler' };
const runId = 'refunds-2026-11-28';
let template: string;
/** A plain refund and a large one (the approval the run waits for), not the sample day's 25: the next engine's run of it ends sooner. */
let day: string;

beforeAll(async () => {
  template = join(root, 'template.json');
  writeFileSync(template, JSON.stringify(await cachedTemplate('refund-reconciler')));
  day = join(root, 'day.json');
  writeFileSync(day, JSON.stringify(makeSampleDay(7, { plain: 1, already_refunded: 0, mismatch: 0, large: 1 })));
});

it('StopExecution while the run waits for an approval: recorded killed, and not resumed by the next engine', async () => {
  const stateDir = join(root, 'state');
  const run = spawn(process.execPath, [bin, '--state-dir', stateDir, 'run', '--template', template, '--world-data', day, '--approve', 'wait', '--approval-timeout', '3600'], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (/⏸ {2}approval/.test(output)) resolve();
    };
    run.stdout.on('data', onData);
    run.stderr.on('data', onData);
    run.on('exit', () => reject(new Error(`the run ended before asking for an approval:\n${output}`)));
  });
  const engine = JSON.parse(readFileSync(join(stateDir, 'engine.json'), 'utf8')) as { endpoints: { sfn: string } };
  const executionArn = /execution (arn:\S+)/.exec(output)![1]!;
  const sfn = new SFNClient({ ...localAwsConfig, endpoint: engine.endpoints.sfn });
  try {
    await sfn.send(new StopExecutionCommand({ executionArn, error: 'Ops.Stop', cause: 'stopped by hand' }));
  } finally {
    sfn.destroy();
  }
  await new Promise((resolve) => run.once('close', resolve));

  const status = async () => JSON.parse((await exec(process.execPath, [bin, '--state-dir', stateDir, 'status', runId, '--json'], { env })).stdout) as { status: string; stopReason?: string };
  expect(await status()).toMatchObject({ status: 'killed', stopReason: expect.stringContaining('killed by StopExecution') });
  // The next engine on this directory (its watchdog resumes runs left running) leaves it killed.
  await exec(process.execPath, [bin, '--state-dir', stateDir, 'run', '--template', template, '--run-id', 'another', '--approve', 'reject'], { env }).catch((error: unknown) => error);
  expect((await status()).status).toBe('killed');
});
