import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connect } from '../../client/index.js';
import { workspace } from '../support/cli-process.js';
import { sampleDay } from '../support/refund-harness.js';
import { startServe } from '../support/serve-process.js';
import { readmeInline } from './readme-text.js';

/**
 * docs/applications.md's curl session, run as it is written against `savepoint serve` (its state
 * directory in place of `.savepoint`): the whole stream, then a resume after the event it names
 * with `Last-Event-ID` and with `?after=` — the same events, exactly those after it.
 */
const children = new Set<ChildProcess>();
const dirs: string[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The session needs curl (and bash, which runs it): without them the test skips itself, as CI installs both (.ci/run). */
const haveCurl = (() => {
  try {
    execFileSync('bash', ['-c', 'command -v curl'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
if (!haveCurl) console.warn('the curl session test skipped: no bash or curl on PATH');

const ids = (output: string) => [...output.matchAll(/^id: (.+)$/gm)].map((match) => match[1]!);

describe.skipIf(!haveCurl)("the run event stream's curl session (docs/applications.md)", () => {
  it('streams the run, and resumes exactly after the event it names, by header and by query', async () => {
    const block = readmeInline(/<!-- run-events-curl -->\n```sh\n([\s\S]*?)\n```/, 'the run events curl session');
    const commands = block.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));
    expect(commands).toHaveLength(4);
    const { stateDir, args } = await workspace('run-events-curl', sampleDay);
    dirs.push(dirname(stateDir));
    const serving = await startServe(args('serve'), children);
    const client = await connect({ stateDir });
    const runId = /\$API\/([^/]+)\/events/.exec(commands[1]!)![1]!;
    await client.start({ agent: 'refund-reconciler', input: { date: sampleDay.date }, runId, config: { approvalTimeoutSeconds: 3600 } });
    for (;;) {
      const run = await client.wait(runId, { untilInput: true });
      if (run.lifecycle !== 'input_required') break;
      for (const approval of run.approvals) await client.decide(approval.approvalId, 'approve');
    }
    const [assign, whole, byHeader, byQuery] = commands.map((line) => line.replaceAll('./.savepoint/', `${stateDir}/`));
    const sh = (command: string) => execFileSync('bash', ['-c', `set -euo pipefail; ${assign}; ${command}`], { encoding: 'utf8', timeout: 30_000 });

    const all = ids(sh(whole!));
    expect(all[0]).toBe('a.run');
    expect(all.at(-1)).toBe('z.run');
    // Every id the session shows is one the run has.
    for (const shown of ids(block.replace(/^# /gm, ''))) expect(all).toContain(shown);
    const resumedAt = /Last-Event-ID: ([^']+)'/.exec(byHeader!)![1]!;
    const after = all.slice(all.indexOf(resumedAt) + 1);
    expect(ids(sh(byHeader!))).toEqual(after);
    expect(ids(sh(byQuery!))).toEqual(after);
    expect(after[0]).toBe(/# id: (\S+)/.exec(block.slice(block.indexOf(byHeader!.replace(`${stateDir}/`, './.savepoint/'))))![1]);

    serving.child.kill('SIGTERM');
    expect(await serving.exited).toBe(0);
  }, 120_000);
});
