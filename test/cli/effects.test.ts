import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { leftBehind, savepoint } from '../support/cli-process.js';

/**
 * `savepoint effects` and `savepoint effects resolve` on a real state directory: a run whose keyed
 * write lost its answer escalates the effect, every later run of the key is answered
 * outcome_unknown and sends nothing — until a person resolves it.
 */

const agentModule = new URL('./fixtures/keyed-note.ts', import.meta.url).pathname;
const { dirs } = leftBehind();
const root = mkdtempSync(join(tmpdir(), 'savepoint-effects-'));
dirs.push(root);
const key = 'keyed-note:save_note:n1';

describe('savepoint effects', () => {
  it('lists an escalated effect; resolved --not-sent, the next run of its key sends it once', async () => {
    const stateDir = join(root, 'not-sent');
    const sends = () => (existsSync(join(stateDir, 'notes.jsonl')) ? readFileSync(join(stateDir, 'notes.jsonl'), 'utf8').split('\n').filter(Boolean).length : 0);
    const run = (runId: string, env: Record<string, string> = {}) =>
      savepoint(['--state-dir', stateDir, 'run', '--agent', agentModule, '--input', '{"noteId":"n1","text":"lunch"}', '--run-id', runId, '--json'], { env });
    const effects = (...args: string[]) => savepoint(['--state-dir', stateDir, 'effects', ...args]);

    const lost = await run('first', { NOTES_LOST: '1' });
    expect(lost.code, lost.stderr).toBe(0);
    expect(sends()).toBe(1);
    // A second run of the key is answered outcome_unknown: it sends nothing.
    const answered = await run('second');
    expect(answered.code, answered.stderr).toBe(0);
    expect(sends()).toBe(1);

    const listed = await effects('--json');
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({ effects: [{ key, state: 'escalated', tool: 'save_note', runId: 'first', turn: expect.any(Number), call: expect.any(Number), resolutions: [] }] });
    expect((await effects()).stdout).toMatch(new RegExp(`^${key}  escalated  save_note  run first \\(turn \\d+, call \\d+\\)`));

    // Only what the provider shows may be said: a missing option, or a key that is not escalated, exits 2 and changes nothing.
    expect((await effects('resolve', key, '--reason', 'checked')).code).toBe(2);
    const unknownKey = await effects('resolve', 'keyed-note:save_note:n9', '--not-sent', '--reason', 'checked');
    expect([unknownKey.code, unknownKey.stderr]).toEqual([2, expect.stringContaining('no effect keyed-note:save_note:n9')]);

    const resolved = await effects('resolve', key, '--not-sent', '--reason', 'no note n1 at the provider');
    expect(resolved.code, resolved.stderr).toBe(0);
    expect(resolved.stdout).toBe(`effect ${key}: resolved as not sent; the next run of its key sends it\n`);
    const again = await effects('resolve', key, '--not-sent', '--reason', 'twice');
    expect([again.code, again.stderr]).toEqual([2, expect.stringContaining('released')]);
    expect(JSON.parse((await effects('--json')).stdout)).toMatchObject({
      effects: [{ key, state: 'released', resolutions: [{ as: 'not_sent', by: expect.stringMatching(/^local:/), reason: 'no note n1 at the provider', runId: 'first' }] }],
    });

    const third = await run('third');
    expect(third.code, third.stderr).toBe(0);
    expect(sends()).toBe(2);
    expect(JSON.parse(third.stdout)).toMatchObject({ status: 'succeeded' });
    // Done now: a later run of the key is answered from it, and sends nothing.
    await run('fourth');
    expect(sends()).toBe(2);
  }, 120_000);
});
