import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { onPath } from '../support/on-path.js';

/**
 * A process out of file descriptors (thousands of idle connections on its loopback ports) still
 * keeps every history event: the log holds its descriptor from the start. Run in a process of its
 * own, whose descriptor limit it lowers and then uses up.
 */

const exec = promisify(execFile);
const root = mkdtempSync(join(tmpdir(), 'savepoint-history-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const tsx = new URL('../../node_modules/.bin/tsx', import.meta.url).pathname;
const historyModule = new URL('../../local/engine/history-log.ts', import.meta.url).pathname;

const prlimit = onPath('prlimit');
if (!prlimit) console.log('skipping the descriptor-exhaustion test: no prlimit on this machine');

it.skipIf(!prlimit)('keeps all 50 events when the process has no descriptor left', async () => {
  const file = join(root, 'history.jsonl');
  const script = join(root, 'exhaust.ts');
  writeFileSync(
    script,
    `import { execFileSync } from 'node:child_process';
import { openSync } from 'node:fs';
import { historyLog } from ${JSON.stringify(historyModule)};
const log = historyLog(${JSON.stringify(file)});
execFileSync('prlimit', ['--pid', String(process.pid), '--nofile=256:256']);
let held = 0;
try { for (;;) { openSync('/dev/null', 'r'); held++; } } catch (error) { console.error('exhausted after', held, (error as { code?: string }).code); }
const executionArn = 'arn:aws:states:us-east-1:000000000000:execution:m:run-1';
for (let i = 0; i < 50; i++) {
  try { log({ type: 'TaskScheduled', timestamp: new Date(), executionArn, id: i } as never); } catch { /* the engine swallows a listener's error */ }
}
`,
  );
  const { stderr } = await exec(tsx, [script], { timeout: 60_000 });
  expect(stderr).toMatch(/exhausted after \d+ EMFILE/);
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  expect(lines).toHaveLength(50);
});
