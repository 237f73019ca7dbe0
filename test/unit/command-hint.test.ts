import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandHint, resumeWords } from '../../cli/command-hint.js';

describe('commandHint: a command to type next, addressed as this one was', () => {
  it('names no state directory when it is the default, typed or resolved', () => {
    expect(commandHint('approvals', { stateDir: '.savepoint' })).toBe('savepoint approvals');
    expect(commandHint('approvals', { stateDir: join(process.cwd(), '.savepoint') })).toBe('savepoint approvals');
    expect(commandHint('approvals', {})).toBe('savepoint approvals');
  });

  it('names another state directory as it was given', () => {
    expect(commandHint('resume r1', { stateDir: '/tmp/flaky' })).toBe('savepoint --state-dir /tmp/flaky resume r1');
    expect(commandHint('resume r1', { stateDir: 'runs/nightly' })).toBe('savepoint --state-dir runs/nightly resume r1');
  });

  it('names a deployed stack, and its region when one was given, instead of any state directory', () => {
    expect(commandHint('approvals', { stack: 'Agents', stateDir: '/tmp/x' })).toBe('savepoint --stack Agents approvals');
    expect(commandHint('approvals', { stack: 'Agents', region: 'eu-west-1' })).toBe('savepoint --stack Agents --region eu-west-1 approvals');
  });

  it('quotes what a shell would split or expand, so that the hint pastes as it reads', () => {
    expect(commandHint('approvals', { stateDir: '/tmp/my runs' })).toBe("savepoint --state-dir '/tmp/my runs' approvals");
    expect(commandHint('approvals', { stateDir: "/tmp/it's $HOME" })).toBe("savepoint --state-dir '/tmp/it'\\''s $HOME' approvals");
  });

  it('resumes a run deciding approvals as the command that ran it did, when it decided them itself', () => {
    expect(resumeWords('r1', 'approve')).toBe('resume r1 --approve approve');
    expect(resumeWords('r1', 'reject')).toBe('resume r1 --approve reject');
    for (const mode of ['wait', 'prompt', undefined]) expect(resumeWords('r1', mode)).toBe('resume r1');
  });
});
