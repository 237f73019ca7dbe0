import { describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import type { ModelClient } from '../../lambdas/records/messages.js';
import { defineAgent } from '../../lambdas/define.js';
import { modelForTurn } from '../../lambdas/guards/fallback.js';
import type { ToolCallRecord, TurnRecord } from '../../lambdas/records/ledger-records.js';
import { modelRegistry } from '../../lambdas/models/registry.js';
import { cachedSecrets, withSecretKeys } from '../../lambdas/models/secrets.js';
import { ErrorNames, ModelRetryAfterError } from '../../lambdas/shared/errors.js';
import { conversation } from '../../lambdas/steps/call-model.js';
import { runRequestFromEvent } from '../../lambdas/runs/run-request.js';
import { runRecord } from '../support/records.js';

describe('the model of a turn (fallback choice)', () => {
  it.each([
    ['the model, while its breaker admits calls', true, 'bedrock:b', { model: 'anthropic:a', fallback: false }],
    ['the fallback, while the model’s breaker is open', false, 'bedrock:b', { model: 'bedrock:b', fallback: true }],
    ['the model (to fail fast and wait), when there is no fallback', false, undefined, { model: 'anthropic:a', fallback: false }],
  ])('is %s', (_case, admitted, fallback, expected) => {
    expect(modelForTurn('anthropic:a', fallback, admitted)).toEqual(expected);
  });
});

describe('the model registry', () => {
  const client: ModelClient = { createMessage: async () => Promise.reject(new Error('unused')) };

  it('builds one client per spec, on first use, reading the configuration once', async () => {
    const built: string[] = [];
    let reads = 0;
    const registry = modelRegistry(
      () => {
        reads += 1;
        return {};
      },
      (spec) => {
        built.push(spec);
        return client;
      },
    );
    await Promise.all([registry.clientFor('anthropic:a'), registry.clientFor('anthropic:a'), registry.clientFor('openai:b')]);
    expect(await registry.clientFor('anthropic:a')).toBe(client);
    expect(built).toEqual(['anthropic:a', 'openai:b']);
    expect(reads).toBe(1);
  });

  it('does not keep a failed build or a failed configuration read: the next call tries again', async () => {
    let attempts = 0;
    const registry = modelRegistry(
      () => {
        attempts += 1;
        if (attempts === 1) throw new Error('secret unreadable');
        return {};
      },
      () => client,
    );
    await expect(registry.clientFor('anthropic:a')).rejects.toThrow('secret unreadable');
    expect(await registry.clientFor('anthropic:a')).toBe(client);
  });

  it('refuses a malformed spec, naming it', async () => {
    const registry = modelRegistry(() => ({}));
    await expect(() => registry.clientFor('claude')).toThrow(/invalid model spec "claude"/);
  });
});

describe('API keys from secrets', () => {
  it('reads each secret once, fills in the keys of the providers that have one, and keeps a key already set', async () => {
    const reads: string[] = [];
    const read = cachedSecrets(async (id) => {
      reads.push(id);
      return ` key-of-${id} \n`;
    });
    const config = await withSecretKeys({ anthropic: { baseUrl: 'https://proxy.example' }, openai: { apiKey: 'set' } }, { anthropic: 'arn:a', openai: 'arn:o' }, read);
    expect(config).toEqual({ anthropic: { baseUrl: 'https://proxy.example', apiKey: 'key-of-arn:a' }, openai: { apiKey: 'set' } });
    await withSecretKeys({}, { anthropic: 'arn:a' }, read);
    expect(reads.sort()).toEqual(['arn:a', 'arn:o']);
  });

  it('does not cache a failed read', async () => {
    let calls = 0;
    const read = cachedSecrets(async () => {
      calls += 1;
      if (calls === 1) throw new Error('throttled');
      return 'k';
    });
    await expect(read('arn:a')).rejects.toThrow('throttled');
    expect(await read('arn:a')).toBe('k');
  });
});

describe('a throttle with retry-after', () => {
  it('carries the seconds first in its message, whole and at least 1, for the state machine to read', () => {
    const error = new ModelRetryAfterError(16.2, 'anthropic model call failed: 429 rate_limit_error: slow down');
    expect(error.name).toBe(ErrorNames.ModelRetryAfter);
    expect(error.message.split(' ')[0]).toBe('17');
    expect(new ModelRetryAfterError(0, 'x').message).toMatch(/^1 s /);
  });
});

describe('a run request’s model', () => {
  it('is validated and normalized, and an invalid one is refused naming the field', () => {
    expect(runRequestFromEvent(refundReconciler, { input: { date: '2026-11-28' }, model: 'openai:gpt-5-mini' }).model).toBe('openai:gpt-5-mini');
    expect(runRequestFromEvent(refundReconciler, { input: { date: '2026-11-28' } }).model).toBeUndefined();
    expect(() => runRequestFromEvent(refundReconciler, { input: { date: '2026-11-28' }, model: 'gpt-5' })).toThrow(/^model: invalid model spec "gpt-5"/);
  });

  it('an agent’s model and fallback are checked when it is defined', () => {
    const base = { ...refundReconciler, name: 'x' };
    expect(() => defineAgent({ ...base, model: 'claude' })).toThrow(/defineAgent x: model: invalid model spec "claude"/);
    expect(() => defineAgent({ ...base, fallbackModel: 'acme:m' })).toThrow(/defineAgent x: fallbackModel: .*unknown provider "acme"/);
    expect(() => defineAgent({ ...base, fallbackModel: base.model })).toThrow(/fallbackModel must differ from model/);
  });
});

describe('the conversation with the harness’s notes', () => {
  const run = runRecord({ agent: 'a', prompt: 'Reconcile the day.', model: 'sim:m', executionArn: 'e', createdAt: '', updatedAt: '' });
  const turn = (n: number, notes: string[], content: TurnRecord['content']): TurnRecord => ({
    kind: 'turn', runId: 'r', turn: n, model: 'sim:m', notes, content, stopReason: 'tool_use', usage: { input_tokens: 1, output_tokens: 1 }, costMicros: 0, latencyMs: 0, recordedAt: '',
  });
  const call = (n: number): ToolCallRecord =>
    ({ kind: 'tool', runId: 'r', turn: n, call: 1, name: 'get_order', args: {}, effect: 'read', status: 'completed', outcome: 'ok', result: `{"n":${n}}` }) as ToolCallRecord;

  it('replays each turn’s notes where they were sent, so every turn’s prompt extends the previous one byte for byte', () => {
    const turns = [
      turn(1, ['[harness] budget A'], [{ type: 'tool_use', id: 't1', name: 'get_order', input: {} }]),
      turn(2, ['[harness] budget B'], [{ type: 'tool_use', id: 't2', name: 'get_order', input: {} }]),
    ];
    const calls = [call(1), call(2)];
    const second = conversation(run, turns.slice(0, 1), calls);
    const third = conversation(run, turns, calls);
    expect(third[0]).toEqual({ role: 'user', content: [{ type: 'text', text: 'Reconcile the day.' }, { type: 'text', text: '[harness] budget A' }] });
    expect(third[2]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: '{"n":1}' }, { type: 'text', text: '[harness] budget B' }] });
    // What turn 2 was sent (its conversation plus its notes) is exactly the start of turn 3's.
    const sentWithTurn2 = structuredClone(second);
    sentWithTurn2[2] = { role: 'user', content: [...(second[2]!.content as object[]), { type: 'text', text: '[harness] budget B' }] } as never;
    expect(JSON.stringify(third.slice(0, 3))).toBe(JSON.stringify(sentWithTurn2));
  });

  it('replays a run recorded before notes were recorded as it was', () => {
    const old = { ...turn(1, [], [{ type: 'text', text: 'done' }]), notes: undefined, stopReason: 'end_turn' };
    expect(conversation(run, [old], [])).toEqual([{ role: 'user', content: 'Reconcile the day.' }, { role: 'assistant', content: [{ type: 'text', text: 'done' }] }]);
  });
});

