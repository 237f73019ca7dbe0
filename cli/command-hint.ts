import { resolve } from 'node:path';
import { DEFAULT_STATE_DIR } from './state.js';

/**
 * A command to type next (`savepoint approve apv_…`), addressed as this one was: with its `--stack`
 * (and `--region`), or its `--state-dir` unless that is the default, so that the hint works pasted
 * as it is. `target`: where this command works — the command line's options (cli/program.ts
 * `nextCommand`), or a run's own state directory (`runCommand`, also started in process).
 */
export function commandHint(words: string, target: { stack?: string; region?: string; stateDir?: string }): string {
  const { stack, region, stateDir: dir } = target;
  const where = stack
    ? ` --stack ${shellWord(stack)}${region ? ` --region ${shellWord(region)}` : ''}`
    : dir !== undefined && resolve(dir) !== resolve(DEFAULT_STATE_DIR)
      ? ` --state-dir ${shellWord(dir)}`
      : '';
  return `savepoint${where} ${words}`;
}

/**
 * `resume <runId>`, as the command that ran the run decided approvals: its `--approve approve` or
 * `--approve reject` kept (a resume without it waits for a person: the mode is the command line's,
 * not recorded in the run).
 */
export function resumeWords(runId: string, approve?: unknown): string {
  return `resume ${runId}${approve === 'approve' || approve === 'reject' ? ` --approve ${approve}` : ''}`;
}

/** A word as a POSIX shell reads it back: as it is when it has nothing the shell would change, else in single quotes. */
const shellWord = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`);
