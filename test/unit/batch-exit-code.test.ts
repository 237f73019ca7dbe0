import { describe, expect, it } from 'vitest';
import { batchExitCode, failure, PRINTED_CAUSE_MAX_CHARS } from '../../cli/commands/batch.js';

describe('savepoint batch --wait', () => {
  it('exits as savepoint run does: 1 for a batch or a run that did not succeed, 3 for a run a guard stopped or a kill ended', () => {
    const batch = (status: string, ...runs: string[]) => ({ status, runs: runs.map((run) => ({ status: run })) });
    expect(batchExitCode(batch('SUCCEEDED', 'succeeded', 'succeeded'))).toBe(0);
    expect(batchExitCode(batch('FAILED'))).toBe(1);
    expect(batchExitCode(batch('SUCCEEDED', 'succeeded', 'refused'))).toBe(1);
    expect(batchExitCode(batch('SUCCEEDED', 'stopped', 'failed'))).toBe(1);
    // A run still pending once the batch has ended never started: the batch did not do it.
    expect(batchExitCode(batch('SUCCEEDED', 'succeeded', 'pending'))).toBe(1);
    expect(batchExitCode(batch('SUCCEEDED', 'succeeded', 'killed'))).toBe(3);
  });
});

describe('savepoint batch’s line of why a batch failed', () => {
  it('prints the error and its cause on one line, the cause cut at PRINTED_CAUSE_MAX_CHARS (--json prints it whole)', () => {
    expect(failure({ error: 'States.ExceedToleratedFailureThreshold', cause: 'The specified tolerated failure threshold\nwas exceeded' })).toEqual(['  States.ExceedToleratedFailureThreshold: The specified tolerated failure threshold was exceeded']);
    const [line] = failure({ error: 'States.Runtime', cause: 'x'.repeat(40_000) });
    expect(line).toBe(`  States.Runtime: ${'x'.repeat(PRINTED_CAUSE_MAX_CHARS - 1)}…`);
    expect(failure({ error: 'States.Timeout' })).toEqual(['  States.Timeout']);
    expect(failure({})).toEqual([]);
  });
});
