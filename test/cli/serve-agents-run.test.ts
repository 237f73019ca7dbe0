import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { leftBehind, savepoint, workspace } from '../support/cli-process.js';
import { sampleDay } from '../support/refund-harness.js';
import { startServe } from '../support/serve-process.js';

/**
 * `savepoint run` and `resume` handed to a `savepoint serve` of several agents, for a run of the
 * agent that is not the state directory's own: the run is that agent's (agents/<name>/), on that
 * agent's engine, and the command reports it as it reports the first agent's.
 */
const { children, dirs } = leftBehind();
const SECOND_AGENT = fileURLToPath(new URL('fixtures/held-note.ts', import.meta.url));

describe("savepoint run on a serve of several agents, for the second agent's run", () => {
  it('reports the run to its end from its own engine, and resume finds its agent from the run', async () => {
    const { stateDir, args } = await workspace('serve-agents-run', sampleDay);
    dirs.push(dirname(stateDir));
    const serving = await startServe([...args('serve'), '--agent', SECOND_AGENT], children);
    try {
      const dir = ['--state-dir', stateDir];
      // The global kill switch ends the run before its first step: its end comes at once, without a person.
      expect((await savepoint([...dir, 'kill', '--all'])).code).toBe(0);

      const run = await savepoint([...dir, 'run', '--agent', SECOND_AGENT, '--input', '{"text":"hi"}', '--run-id', 'note-1', '--json']);
      expect(run.code, run.stderr).toBe(3);
      // Its execution's figures, read from the held-note engine's Step Functions API (the first agent's knows no such execution).
      expect(JSON.parse(run.stdout)).toMatchObject({ runId: 'note-1', agent: 'held-note', status: 'killed', execution: { executionArn: expect.stringContaining(':execution:Savepoint-held-note:note-1-'), status: 'SUCCEEDED' } });

      // Resumed by its id alone: the run names its agent (serve asks a start of several agents to name one).
      const resumed = await savepoint([...dir, 'resume', 'note-1']);
      expect(resumed.stderr).toBe('');
      expect(resumed.code).toBe(3);
      expect(resumed.stdout).toContain('savepoint: run note-1 had already finished; nothing to do');
      expect(resumed.stdout).toMatch(/^run note-1 \(held-note .*\): killed/m);
    } finally {
      serving.child.kill('SIGTERM');
      await serving.exited;
    }
  }, 120_000);
});
