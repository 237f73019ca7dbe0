/**
 * Lambda's concurrency, as the local twin counts it (local/aws/lambda-concurrency.ts; Lambda
 * Developer Guide, https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html and
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html): an invoke past the
 * account's quota or the function's reservation is throttled (TooManyRequestsException, reported
 * by the Task as Lambda.TooManyRequestsException), and the state machine's Retry runs it again once
 * there is room, losing nothing; reservations that leave under 100 to the rest are refused.
 */
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineAgent, defineTool, withDev } from '../../lambdas/index.js';
import { LAMBDA_MIN_UNRESERVED_CONCURRENCY } from '../../lambdas/shared/limits.js';
import { LambdaConcurrency, reservedConcurrency } from '../../local/aws/lambda-concurrency.js';
import { startLocalStack } from '../../local/runtime/local-stack.js';
import { extractStateMachine, type CfnTemplateJson } from '../../local/template/asl.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { oneTurnPolicy, type ReadResult } from '../support/one-turn-policy.js';

const CALLS = [1, 2, 3, 4].map((n) => ({ id: `c${n}`, name: 'pay', input: { invoice: `inv_${n}` } }));

/** The provider: each key's first request takes effect. The first calls wait until `release`. */
const applied = new Map<string, number>();
let held: (() => void)[] = [];
let holding = true;
let results: ReadResult[] = [];

const agent = withDev(
  defineAgent({
    name: 'concurrency',
    model: 'sim:savepoint-sim-1',
    system: 'Pay the invoices.',
    input: z.object({}).strict(),
    prompt: () => 'Pay inv_1 to inv_4.',
    tools: [
      defineTool({
        name: 'pay',
        description: 'Pays an invoice.',
        input: z.object({ invoice: z.string() }).strict(),
        effect: 'write',
        idempotencyKeys: true,
        execute: async (args, { idempotencyKey }) => {
          applied.set(idempotencyKey, (applied.get(idempotencyKey) ?? 0) + 1);
          if (holding) await new Promise<void>((resolve) => held.push(resolve));
          return { paid: args.invoice };
        },
      }),
    ],
  }),
  { policy: oneTurnPolicy(CALLS, (read) => (results = read)) },
);

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  applied.clear();
  held = [];
  holding = true;
  results = [];
});

/** The agent's template (the refund reconciler's definition: the same steps) with CallTool's function reserving `count`. */
async function withCallToolReserving(count: number): Promise<{ template: CfnTemplateJson; logicalId: string }> {
  const template = structuredClone(await cachedTemplate('refund-reconciler')) as CfnTemplateJson & { Resources: Record<string, { Properties: Record<string, unknown> }> };
  const logicalId = extractStateMachine(template).tasks['CallTool']!.functionLogicalId;
  template.Resources[logicalId]!.Properties['ReservedConcurrentExecutions'] = count;
  return { template, logicalId };
}

describe("Lambda's concurrency in the twin", () => {
  it('throttles the fourth call of a turn past a reservation of 3, and the Retry runs it once there is room: each payment once', async () => {
    const { template } = await withCallToolReserving(3);
    const stack = await startLocalStack({ agent, template, lambdaConcurrency: LAMBDA_MIN_UNRESERVED_CONCURRENCY + 3, retryDelayMs: 5 });
    closers.push(() => stack.close());
    // The three admitted calls hold their invocations until the fourth has been throttled.
    const unsubscribe = stack.engine.on((event) => {
      if (event.type === 'TaskFailed' && event.taskFailedEventDetails?.error === 'Lambda.TooManyRequestsException') {
        holding = false;
        for (const release of held.splice(0)) release();
      }
    });
    closers.push(async () => unsubscribe());
    const { executionArn } = stack.engine.startExecution({ name: 'throttled', input: { runId: 'throttled', input: {} } });
    const finished = await stack.engine.waitForExecution(executionArn);

    expect(finished.status).toBe('SUCCEEDED');
    expect(stack.lambdaConcurrency.throttles).toBeGreaterThanOrEqual(1);
    const failures = stack.engine.getExecutionHistory(executionArn).filter((event) => event.type === 'TaskFailed').map((event) => event.taskFailedEventDetails?.error);
    expect(new Set(failures)).toEqual(new Set(['Lambda.TooManyRequestsException']));
    expect([...applied.values()]).toEqual([1, 1, 1, 1]);
    expect(results.map((result) => result.id)).toEqual(['c1', 'c2', 'c3', 'c4']);
  });

  it('admits the four at once with no reservation on the default quota', async () => {
    holding = false;
    const stack = await startLocalStack({ agent, template: await cachedTemplate('refund-reconciler'), retryDelayMs: 5 });
    closers.push(() => stack.close());
    const { executionArn } = stack.engine.startExecution({ name: 'free', input: { runId: 'free', input: {} } });
    expect((await stack.engine.waitForExecution(executionArn)).status).toBe('SUCCEEDED');
    expect(stack.lambdaConcurrency.throttles).toBe(0);
  });

  it('refuses to start a stack whose reservations leave under 100 of the account to the rest, and a deploy that would', async () => {
    const { template } = await withCallToolReserving(3);
    await expect(startLocalStack({ agent, template, lambdaConcurrency: LAMBDA_MIN_UNRESERVED_CONCURRENCY + 2 })).rejects.toMatchObject({
      name: 'InvalidParameterValueException',
      message: expect.stringMatching(/^Specified ReservedConcurrentExecutions for function decreases account's UnreservedConcurrentExecution below its minimum value of \[100\]/),
    });
    const stack = await startLocalStack({ agent, template: await cachedTemplate('refund-reconciler'), lambdaConcurrency: LAMBDA_MIN_UNRESERVED_CONCURRENCY + 2 });
    closers.push(() => stack.close());
    expect(() => stack.deploy(agent, { template, codeVersion: 'v2' })).toThrow(/UnreservedConcurrentExecution below its minimum value of \[100\]/);
  });

  it('counts the account and a reservation apart: a reserved function past its own ceiling is throttled while the account has room, and the others share what is left', () => {
    const concurrency = new LambdaConcurrency(102);
    concurrency.reserve(new Map([['Reserved', 2]]));
    const releases = [concurrency.acquire('Reserved'), concurrency.acquire('Reserved')];
    expect(() => concurrency.acquire('Reserved')).toThrow(expect.objectContaining({ name: 'TooManyRequestsException', statusCode: 429 }));
    const others = Array.from({ length: 100 }, () => concurrency.acquire('Other'));
    expect(() => concurrency.acquire('Another')).toThrow(/Rate Exceeded/);
    releases[0]!();
    releases[0]!(); // a release counts once
    expect(() => concurrency.acquire('Reserved')).not.toThrow();
    others[0]!();
    expect(() => concurrency.acquire('Another')).not.toThrow();
    expect(concurrency.throttles).toBe(2);
    expect(() => new LambdaConcurrency(0)).toThrow(RangeError);
  });

  it("reads the template's ReservedConcurrentExecutions by function", async () => {
    const { template, logicalId } = await withCallToolReserving(7);
    expect([...reservedConcurrency(template)]).toEqual([[logicalId, 7]]);
  });
});
