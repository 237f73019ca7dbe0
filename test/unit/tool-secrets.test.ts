import { describe, expect, it } from 'vitest';
import { TOOL_SECRET_TTL_MS, toolSecrets, toolSecretsFromEnv } from '../../lambdas/tools/secrets.js';
import { TestClock } from '../../testing/index.js';

/** A tool credential is read when a tool asks, kept TOOL_SECRET_TTL_MS, then read again (a rotated secret is picked up). */
describe('tool secrets', () => {
  it('reads a secret once, keeps it for the TTL, then reads it again', async () => {
    const clock = new TestClock(new Date('2026-12-01T00:00:00Z'));
    const reads: string[] = [];
    let value = 'https://hooks.example/first';
    const secrets = toolSecrets({ WEBHOOK_URL: 'arn:aws:secretsmanager:us-east-1:1:secret:hook-AbCdEf' }, async (id) => (reads.push(id), value), clock);
    expect(await secrets('WEBHOOK_URL')).toBe('https://hooks.example/first');
    value = 'https://hooks.example/rotated';
    clock.advance(TOOL_SECRET_TTL_MS - 1);
    expect(await secrets('WEBHOOK_URL')).toBe('https://hooks.example/first');
    expect(reads).toHaveLength(1);
    clock.advance(1);
    expect(await secrets('WEBHOOK_URL')).toBe('https://hooks.example/rotated');
    expect(reads).toEqual(['arn:aws:secretsmanager:us-east-1:1:secret:hook-AbCdEf', 'arn:aws:secretsmanager:us-east-1:1:secret:hook-AbCdEf']);
  });

  it('does not keep a failed read: the next ask reads again', async () => {
    const clock = new TestClock(new Date('2026-12-01T00:00:00Z'));
    let fail = true;
    const secrets = toolSecrets({ KEY: 'id' }, async () => (fail ? Promise.reject(new Error('AccessDeniedException')) : 'value'), clock);
    await expect(secrets('KEY')).rejects.toThrow('AccessDeniedException');
    fail = false;
    expect(await secrets('KEY')).toBe('value');
  });

  it('refuses a name the deployment does not configure, naming the ones it does', async () => {
    const secrets = toolSecrets({ KEY: 'id', OTHER: 'id2' }, async () => 'value', new TestClock(new Date()));
    await expect(secrets('NOPE')).rejects.toThrow('tool secret "NOPE" is not configured: the deployment\'s toolSecrets name KEY, OTHER');
    await expect(secrets('toString')).rejects.toThrow(/is not configured/);
  });
});

describe('tool secrets of a local run', () => {
  it('come from SAVEPOINT_TOOL_SECRET_<NAME> variables, by name; other variables and empty values are not secrets', () => {
    expect(toolSecretsFromEnv({ SAVEPOINT_TOOL_SECRET_CHAT_WEBHOOK_URL: 'https://hooks.example/x', SAVEPOINT_TOOL_SECRET_EMPTY: '', SAVEPOINT_TOOL_SECRET_: 'x', PATH: '/bin', ANTHROPIC_API_KEY: 'k' })).toEqual({ CHAT_WEBHOOK_URL: 'https://hooks.example/x' });
  });
});
