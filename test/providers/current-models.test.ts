import Anthropic from '@anthropic-ai/sdk';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startAnthropicServer } from '../../sim/wire/anthropic-server.js';
import type { WireServer } from '../../sim/wire/http.js';

/**
 * Examples and defaults name current models (issue 39, item 4): every Claude model the README and its guides (docs/), the
 * example agents and the harness's own messages and docs name — as `anthropic:<id>`, or through
 * Bedrock as `bedrock:[<region>.]anthropic.<id>-v<n>:<m>` — is called once with the bundled
 * `@anthropic-ai/sdk`, which warns on every call of a model it calls deprecated ("… is deprecated
 * and will reach end-of-life on …"): none may warn. The price tables (lambdas/models/*-provider.ts)
 * keep older models on purpose, for runs already bound to them, and are not scanned; nor are tests.
 */
const ROOT = new URL('../../', import.meta.url).pathname;
const SCANNED = ['README.md', 'docs', 'agents', 'lambdas', 'cli', 'infra', 'cdk', 'client', 'testing', 'sim', 'bench', 'local'];
const PRICE_TABLES = /^lambdas\/models\/[a-z-]+-provider\.ts$/;

function files(path: string): string[] {
  if (path.endsWith('.md') || path.endsWith('.ts')) return [path];
  return (readdirSync(join(ROOT, path), { recursive: true }) as string[]).filter((file) => file.endsWith('.ts') || file.endsWith('.md')).map((file) => join(path, file));
}

/** Each Claude model id named, with where. */
function namedClaudeModels(): Map<string, string> {
  const named = new Map<string, string>();
  for (const file of SCANNED.flatMap(files).filter((file) => !PRICE_TABLES.test(file))) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const match of text.matchAll(/\banthropic:(claude-[a-z0-9-]*[a-z0-9])/g)) named.set(match[1]!, file);
    for (const match of text.matchAll(/\bbedrock:(?:[a-z]+\.)?anthropic\.(claude-[a-z0-9-]+?)-v\d+:\d+/g)) named.set(match[1]!, file);
  }
  return named;
}

let server: WireServer;
const named = namedClaudeModels();
beforeAll(async () => {
  server = await startAnthropicServer({ apiKey: 'sk-test', models: [...named.keys(), 'claude-sonnet-4-5'], policy: () => ({ content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn' }) });
});
afterAll(() => server.close());

/** What the SDK warns when it calls `model`. */
async function warningsFor(model: string): Promise<string[]> {
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
  try {
    const anthropic = new Anthropic({ apiKey: 'sk-test', baseURL: server.url, maxRetries: 0 });
    await anthropic.messages.create({ model, max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] });
    return warn.mock.calls.map((call) => call.map(String).join(' '));
  } finally {
    warn.mockRestore();
  }
}

describe('the models savepoint names', () => {
  it('finds the models the README and the defaults name', () => {
    expect([...named.keys()]).toEqual(expect.arrayContaining(['claude-sonnet-4-6', 'claude-haiku-4-5']));
  });

  it('are none the bundled Anthropic SDK calls deprecated', async () => {
    const deprecated: string[] = [];
    for (const [model, file] of named) {
      const warnings = (await warningsFor(model)).filter((warning) => /deprecated/i.test(warning));
      if (warnings.length > 0) deprecated.push(`${model} (${file}): ${warnings[0]!.split('\n')[0]}`);
    }
    expect(deprecated).toEqual([]);
  });

  it('would notice one: the SDK warns for claude-sonnet-4-5, which it calls end-of-life', async () => {
    expect((await warningsFor('claude-sonnet-4-5')).join('\n')).toMatch(/The model 'claude-sonnet-4-5' is deprecated/);
  });
});
