import { describe, expect, it } from 'vitest';
import { costOf, DEFAULT_PRICE_TABLE, priceFor, priceTable } from '../../lambdas/models/prices.js';
import { parseModelSpec } from '../../lambdas/models/spec.js';
import { BreakpointCache, PrefixCache } from '../../sim/wire/prompt-cache.js';

describe('prices', () => {
  it('prices input, output, cache writes and cache reads apart', () => {
    // Sonnet-class: $3 in, $15 out, $3.75 cache write, $0.30 cache read per MTok.
    const usage = { input_tokens: 1_000, output_tokens: 2_000, cache_creation_input_tokens: 10_000, cache_read_input_tokens: 100_000 };
    expect(costOf('anthropic:claude-sonnet-4-5', usage)).toBeCloseTo((1_000 * 3 + 2_000 * 15 + 10_000 * 3.75 + 100_000 * 0.3) / 1e6, 12);
    expect(costOf('sim:savepoint-sim-1', { input_tokens: 1_000_000, output_tokens: 0 })).toBe(3);
  });

  it('makes a cached turn cheaper than the same turn uncached, per provider', () => {
    for (const spec of ['anthropic:claude-haiku-4-5', 'bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0', 'openai:gpt-5-mini']) {
      const uncached = costOf(spec, { input_tokens: 50_000, output_tokens: 500 });
      const cached = costOf(spec, { input_tokens: 1_000, output_tokens: 500, cache_read_input_tokens: 49_000 });
      expect(cached).toBeLessThan(uncached * 0.3);
    }
  });

  it('refuses an unpriced model with a message naming it', () => {
    expect(() => priceFor('anthropic:claude-unknown-9')).toThrow(
      expect.objectContaining({ name: 'Agent.InvalidInput', message: expect.stringMatching(/model anthropic:claude-unknown-9 has no price in price table 2026-11-01/) }),
    );
    expect(() => costOf('openai:gpt-unknown', { input_tokens: 1, output_tokens: 1 })).toThrow(/openai:gpt-unknown has no price/);
  });

  it('applies overrides and versions the result', () => {
    const table = priceTable({ 'openai:gpt-unknown': { inputPerMTok: 1, outputPerMTok: 2, cacheWritePerMTok: 1, cacheReadPerMTok: 0.1 } });
    expect(table.version).toMatch(/^2026-11-01\+[0-9a-f]{8}$/);
    expect(costOf('openai:gpt-unknown', { input_tokens: 1_000_000, output_tokens: 1_000_000 }, table)).toBe(3);
    expect(priceTable({}).version).toBe(DEFAULT_PRICE_TABLE.version);
    expect(priceTable({ 'openai:gpt-5': { ...priceFor('openai:gpt-5'), outputPerMTok: 9 } }).version).not.toBe(table.version);
  });

  it('refuses a malformed override', () => {
    expect(() => priceTable({ 'openai:gpt-5': { inputPerMTok: -1, outputPerMTok: 1, cacheWritePerMTok: 1, cacheReadPerMTok: 1 } })).toThrow(/invalid price overrides/);
    expect(() => priceTable({ 'gpt-5': { inputPerMTok: 1, outputPerMTok: 1, cacheWritePerMTok: 1, cacheReadPerMTok: 1 } })).toThrow(/invalid model spec "gpt-5"/);
  });

  it('keys every default price by a valid spec', () => {
    for (const spec of Object.keys(DEFAULT_PRICE_TABLE.models)) expect(() => parseModelSpec(spec)).not.toThrow();
  });
});

describe('the simulated prompt caches', () => {
  const block = (chars: number, breakpoint = false, fill = 'a') => ({ text: fill.repeat(chars), breakpoint });

  it('caches nothing under the minimum length, then writes once and reads on a byte-identical prefix', () => {
    const cache = new BreakpointCache();
    expect(cache.account([block(4000, true)])).toEqual({ input: 1000, cacheRead: 0, cacheWrite: 0 });
    expect(cache.account([block(4000, true)])).toEqual({ input: 1000, cacheRead: 0, cacheWrite: 0 });
    expect(cache.account([block(8000, true), block(400)])).toEqual({ input: 100, cacheRead: 0, cacheWrite: 2000 });
    expect(cache.account([block(8000), block(400), block(400, true)])).toEqual({ input: 0, cacheRead: 2000, cacheWrite: 200 });
    // One character changed in the prefix: no hit.
    expect(cache.account([block(8000, true, 'b')])).toEqual({ input: 0, cacheRead: 0, cacheWrite: 2000 });
  });

  it('reads through the lookback window only', () => {
    const cache = new BreakpointCache({ lookback: 3 });
    const prefix = [block(8000, true)];
    cache.account(prefix);
    const far = [block(8000), block(4), block(4), block(4, true)];
    expect(cache.account(far).cacheRead).toBe(0);
  });

  it('counts OpenAI-style cached tokens from 1024 in steps of 128', () => {
    const cache = new PrefixCache();
    const base = 'x'.repeat(4 * 1100);
    expect(cache.account(base)).toBe(0);
    expect(cache.account(`${base}y`)).toBe(1024);
    expect(cache.account(`${base}${'z'.repeat(4 * 200)}`)).toBe(1024);
    expect(cache.account(`${base}${'z'.repeat(4 * 200)}w`)).toBe(1280);
    expect(new PrefixCache().account('x'.repeat(100_000))).toBe(0);
  });
});
