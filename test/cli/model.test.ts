import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { costOf } from '../../lambdas/models/prices.js';
import { startAnthropicServer } from '../../sim/wire/anthropic-server.js';
import { startBedrockServer } from '../../sim/wire/bedrock-server.js';
import type { WireServer } from '../../sim/wire/http.js';
import { startOpenAIServer } from '../../sim/wire/openai-server.js';

const bin = new URL('../../bin/savepoint.js', import.meta.url).pathname;
const exec = promisify(execFile);
const KEY = 'sk-ant-cli-test';
/** Where the refused runs would have made their state directories. */
const scratch = mkdtempSync(join(tmpdir(), 'savepoint-model-'));
let refusedCount = 0;
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
/**
 * The runs' day: four refund requests, one of each kind (a large one waits for an approval), not the
 * sample day's 25: each turn goes to the provider's API and is priced the same however many there
 * are, for a quarter less CPU (the file: 2.7–2.9 s against 3.7–3.9 s, two sittings on 2026-12-05).
 */
const day = join(scratch, 'day.json');
writeFileSync(day, JSON.stringify(makeSampleDay(7, { plain: 1, already_refunded: 1, mismatch: 1, large: 1 })));

/** The real CLI in a process of its own, with `env` over a clean environment (no keys of the machine's). */
async function savepoint(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(ANTHROPIC|OPENAI|BEDROCK|MODEL_API)_/.test(name)));
  try {
    const { stdout, stderr } = await exec(process.execPath, [bin, ...args], { timeout: 120_000, env: { ...base, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

let anthropic: WireServer;
beforeAll(async () => {
  // The strict local Anthropic Messages API, answering with the agent's own scripted model.
  anthropic = await startAnthropicServer({ policy: refundReconciler.dev!.policy!, apiKey: KEY, models: ['claude-haiku-4-5'] });
});
afterAll(() => anthropic.close());

describe('savepoint run --model', () => {
  it('runs the refund reconciler on Anthropic through the official SDK, with the prompt cache read every turn', async () => {
    const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: anthropic.url };
    // The server is the file's: this run's requests are those it accepts from here on.
    const earlier = anthropic.acceptedBodies().length;
    const run = await savepoint(['run', '--agent', 'refund-reconciler', '--memory', '--json', '--approve', 'approve', '--world-data', day, '--model', 'anthropic:claude-haiku-4-5'], env);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as Record<string, any>;
    expect(report).toMatchObject({ status: 'succeeded', model: 'anthropic:claude-haiku-4-5', inFlight: 0 });
    expect(report['turnsByModel']).toEqual({ 'anthropic:claude-haiku-4-5': report['modelTurns'] });
    // Every call went to the wire server (none to the simulator), and all but the first read the cache.
    const bodies = anthropic.acceptedBodies().slice(earlier) as { system: unknown; tools: unknown }[];
    expect(bodies).toHaveLength(report['modelTurns']);
    expect(report['tokens'].cachedInput).toBeGreaterThan(report['tokens'].input / 2);
    // Priced as Haiku: far below what the same tokens would cost uncached.
    const uncached = costOf('anthropic:claude-haiku-4-5', { input_tokens: report['tokens'].input, output_tokens: report['tokens'].output });
    expect(report['dollars']).toBeGreaterThan(0);
    expect(report['dollars']).toBeLessThan(uncached * 0.5);
    // The system prompt and the tools are the same bytes on every turn: what the cache matches.
    expect(new Set(bodies.map((body) => JSON.stringify([body.system, body.tools]))).size).toBe(1);
  });

  it.each([
    ['openai:gpt-5-mini', async () => {
      const server = await startOpenAIServer({ policy: refundReconciler.dev!.policy!, apiKey: 'sk-openai-cli-test', models: ['gpt-5-mini'] });
      return { server, env: { OPENAI_API_KEY: 'sk-openai-cli-test', OPENAI_BASE_URL: `${server.url}/v1` } };
    }],
    ['bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0', async () => {
      const server = await startBedrockServer({ policy: refundReconciler.dev!.policy!, region: 'us-east-1', credentials: { AKIDCLITEST: 'cli-test-secret' }, models: ['us.anthropic.claude-haiku-4-5-20251001-v1:0'] });
      return { server, env: { AWS_REGION: 'us-east-1', BEDROCK_ENDPOINT: server.url, AWS_ACCESS_KEY_ID: 'AKIDCLITEST', AWS_SECRET_ACCESS_KEY: 'cli-test-secret' } };
    }],
  ])('runs the refund reconciler on %s through its SDK against the local wire server', async (model, start) => {
    const { server, env } = await start();
    try {
      const run = await savepoint(['run', '--agent', 'refund-reconciler', '--memory', '--json', '--approve', 'approve', '--world-data', day, '--model', model], env);
      expect(run.code, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout) as Record<string, any>;
      expect(report).toMatchObject({ status: 'succeeded', model, turnsByModel: { [model]: report['modelTurns'] } });
      expect(server.acceptedBodies()).toHaveLength(report['modelTurns']);
      expect(report['tokens'].cachedInput).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });

  it('fails a run on a key the provider refuses, ends the report with the command that resumes it, and that command as printed finishes the run once the key is right', async () => {
    const stateDir = join(scratch, 'wrong-key');
    const run = ['run', '--agent', 'refund-reconciler', '--approve', 'approve', '--world-data', day, '--model', 'anthropic:claude-haiku-4-5', '--run-id', 'wrong-key'];
    const failed = await savepoint(['--state-dir', stateDir, ...run], { ANTHROPIC_API_KEY: 'sk-ant-wrong', ANTHROPIC_BASE_URL: anthropic.url });
    expect(failed.code, failed.stderr).toBe(1);
    expect(failed.stdout).toMatch(/^run wrong-key .*: failed — .*\[authentication\]/m);
    const resume = /^the run failed: once its cause is fixed, it resumes where it stopped: savepoint (.+)$/m.exec(failed.stdout)?.[1];
    // As the run decided its approvals (--approve approve): a resume without it would wait for a person.
    expect(resume).toBe(`--state-dir ${stateDir} resume wrong-key --approve approve`);
    // The failed run replays to the same failure: the provider's refusal is answered from the record, as its answers are.
    const requests = anthropic.requestCount();
    const replayed = await savepoint(['--state-dir', stateDir, 'replay', 'wrong-key', '--json']);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout)).toMatchObject({ identical: true, live: { model: 0, tools: 0 } });
    expect(anthropic.requestCount()).toBe(requests);
    const resumed = await savepoint(resume!.split(' '), { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: anthropic.url });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/^run wrong-key .*: succeeded/m);
    expect(resumed.stdout).not.toMatch(/the run failed/);
    // And once resumed and finished, it replays straight through: the refused call left nothing to make again.
    const finished = await savepoint(['--state-dir', stateDir, 'replay', 'wrong-key', '--json']);
    expect(JSON.parse(finished.stdout), finished.stderr).toMatchObject({ identical: true });
  });

  it("recovers a run whose execution failed while the provider was down, and ends with the run: succeeded, exit 0, the recovery said", async () => {
    const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: anthropic.url };
    // Seven 500s in a row: more than CallModel's six retries of a transient error, so the first execution fails.
    anthropic.failNext(7, { kind: 'server_error' });
    const run = await savepoint(['--state-dir', join(scratch, 'outage'), 'run', '--agent', 'refund-reconciler', '--approve', 'approve', '--world-data', day, '--model', 'anthropic:claude-haiku-4-5', '--run-id', 'outage'], env);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^savepoint: execution outage-\w+ FAILED \(Agent\.Transient: .*\); recovery 1 resumes the run — execution outage-recovery-1$/m);
    expect(run.stdout).toMatch(/^run outage .*: succeeded/m);
    expect(run.stdout).toMatch(/1 automatic recovery, last after execution outage-\w+ FAILED: Agent\.Transient/);
    expect(run.stdout).not.toMatch(/the run failed/);
  });

  it('refuses a malformed model spec as a usage error naming the option', async () => {
    const bad = await savepoint(['run', '--agent', 'refund-reconciler', '--memory', '--model', 'claude']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/model: expected "provider:model-id"/);
  });

  // Before the engine starts: no call, and no state directory made for a run that cannot go.
  it.each([
    ['without a price', 'anthropic:claude-unpriced-9', () => ({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: anthropic.url }), /^savepoint: model anthropic:claude-unpriced-9 has no price in price table /],
    ['without its API key', 'anthropic:claude-haiku-4-5', () => ({ ANTHROPIC_BASE_URL: anthropic.url }), /^savepoint: model anthropic:claude-haiku-4-5 needs an Anthropic API key: set ANTHROPIC_API_KEY/],
    ['with a base URL that is none', 'anthropic:claude-haiku-4-5', () => ({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: 'localhost-4318' }), /^savepoint: ANTHROPIC_BASE_URL \(anthropic\.baseUrl\)=localhost-4318 is not a URL/],
  ])('refuses a model %s before anything is made, naming it', async (_case, model, env, message) => {
    const requests = anthropic.requestCount();
    const stateDir = join(scratch, `never-made-${refusedCount++}`);
    const refused = await savepoint(['--state-dir', stateDir, 'run', '--agent', 'refund-reconciler', '--model', model], env());
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(message);
    expect(existsSync(stateDir)).toBe(false);
    expect(anthropic.requestCount()).toBe(requests);
  });
});
