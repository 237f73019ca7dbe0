import { describe, expect, expectTypeOf, it } from 'vitest';
import * as z from 'zod';
import { defineAgent, defineAgentTool, defineTool, JsonHttpClient, withDev, type ToolContext } from '../../lambdas/index.js';

/**
 * A tool's `deps` typed from its agent (issue 39, item 6): `tools: (defineTool) => [...]` gets a
 * `defineTool` bound to the agent's `deps` and input, so `execute` needs no explicit generics. The
 * types are checked by `tsc -p .` (this file is in the project): were `deps` inferred as `unknown`
 * or `any`, the `expectTypeOf` lines would not compile.
 */

class Payments {
  constructor(readonly url: string) {}
  refund(paymentId: string): Promise<{ refundId: string }> {
    return Promise.resolve({ refundId: `re_${paymentId}` });
  }
}

const agent = defineAgent({
  name: 'typed-deps',
  model: 'sim:savepoint-sim-1',
  system: 'Refund.',
  input: z.object({ day: z.string() }),
  prompt: (input) => `Refund ${input.day}.`,
  env: ['PAYMENTS_API_URL'],
  deps: (env, { fetch }) => ({ payments: new Payments(env['PAYMENTS_API_URL'] ?? 'http://127.0.0.1:1'), http: new JsonHttpClient({ baseUrl: 'http://127.0.0.1:1', fetch }) }),
  tools: (defineTool) => [
    defineTool({
      name: 'refund',
      description: 'Refunds a payment.',
      input: z.object({ paymentId: z.string() }),
      effect: 'write',
      idempotencyKeys: true,
      needsApproval: (args, run, _facts, deps) => {
        expectTypeOf(deps.payments).toEqualTypeOf<Payments>();
        expectTypeOf(run.input).toEqualTypeOf<{ day: string }>();
        return args.paymentId.startsWith('big') ? { summary: `refund ${args.paymentId}` } : undefined;
      },
      execute: (args, context) => {
        expectTypeOf(context).toEqualTypeOf<ToolContext<{ day: string }, { payments: Payments; http: JsonHttpClient }>>();
        expectTypeOf(args).toEqualTypeOf<{ paymentId: string }>();
        // @ts-expect-error: deps has no such client
        void context.deps.mail;
        return context.deps.payments.refund(args.paymentId);
      },
    }),
  ],
});

describe('defineAgent({ tools: (defineTool) => [...] })', () => {
  it("gives the tools the agent's deps, as the agent's deps build them", async () => {
    expect(agent.tools.map((tool) => tool.name)).toEqual(['refund']);
    const deps = agent.deps!({ PAYMENTS_API_URL: 'http://payments.test' }, { fetch: globalThis.fetch });
    const context = { deps, idempotencyKey: 'k', runId: 'r', input: { day: '2026-12-01' }, config: {}, turn: 1, call: 'c' } as unknown as ToolContext<{ day: string }, typeof deps>;
    expect(await agent.tools[0]!.execute({ paymentId: 'p1' }, context)).toEqual({ refundId: 're_p1' });
  });

  it('checks each tool as defineTool does', () => {
    expect(() =>
      defineAgent({
        name: 'bad-tool',
        model: 'sim:savepoint-sim-1',
        system: 's',
        input: z.object({}),
        prompt: () => 'p',
        tools: (defineTool) => [defineTool({ name: 'no spaces', description: 'd', input: z.object({}), effect: 'read', execute: async () => 1 })],
      }),
    ).toThrow('defineTool: name "no spaces" must be 1-64 letters');
  });

  it('fails when a tool in the list was not made by defineTool and breaks its rules, naming the agent, the tool and the value', () => {
    const lookup = { name: 'look up', description: 'd', input: z.object({}), effect: 'read' as const, execute: async () => 1 };
    const agent = { name: 'plain-tools', model: 'sim:savepoint-sim-1', system: 's', input: z.object({}), prompt: () => 'p' };
    expect(() => defineAgent({ ...agent, tools: [lookup] })).toThrow('defineAgent plain-tools: tools[0]: defineTool: name "look up" must be 1-64 letters');
    expect(() => defineAgent({ ...agent, tools: [{ ...lookup, name: 'lookup', input: z.string() }] })).toThrow('defineAgent plain-tools: tools[0]: defineTool lookup: input must be an object schema');
  });

  it('fails when a tool description or the system prompt is empty, which a provider refuses', () => {
    const lookup = { name: 'lookup', description: ' ', input: z.object({}), effect: 'read' as const, execute: async () => 1 };
    expect(() => defineTool(lookup)).toThrow('defineTool lookup: description must say what the tool does, for the model, got " "');
    expect(() =>
      defineAgent({ name: 'no-system', model: 'sim:savepoint-sim-1', system: '', input: z.object({}), prompt: () => 'p', tools: [{ ...lookup, description: 'd' }] }),
    ).toThrow('defineAgent no-system: system must be a prompt the model is given, got ""');
  });

  it('fails when env names a variable Lambda cannot set (one character)', () => {
    expect(() =>
      defineAgent({ name: 'short-env', model: 'sim:savepoint-sim-1', system: 's', input: z.object({}), prompt: () => 'p', env: ['X'], tools: [] }),
    ).toThrow('defineAgent short-env: env: "X" is not an environment variable name Lambda takes');
  });

  it('fails on compaction settings that would do nothing or break a run (no contextWindow, a fraction or a negative count of turns), and on an empty version, naming each', () => {
    const base = { model: 'sim:savepoint-sim-1', system: 's', input: z.object({}), prompt: () => 'p', tools: [] } as const;
    expect(() => defineAgent({ ...base, name: 'no-window', compaction: { share: 0.5 } })).toThrow(
      'defineAgent no-window: compaction needs contextWindow (the model\'s context window in tokens, which compaction.share is a share of): without it nothing is ever compacted',
    );
    for (const keepRecentTurns of [-1, 1.5, Number.NaN]) {
      expect(() => defineAgent({ ...base, name: 'keep', contextWindow: 200_000, compaction: { keepRecentTurns } }), String(keepRecentTurns)).toThrow(
        `defineAgent keep: compaction.keepRecentTurns must be a whole number of turns ≥ 0, got ${keepRecentTurns}`,
      );
    }
    for (const version of ['', '  ']) {
      expect(() => defineAgent({ ...base, name: 'versioned', version })).toThrow(`defineAgent versioned: version must name this version of the agent (it is part of the fingerprint that guards resumes), got ${JSON.stringify(version)}`);
    }
  });

  it('fails when env names something that is not an environment variable', () => {
    expect(() =>
      defineAgent({ name: 'bad-env', model: 'sim:savepoint-sim-1', system: 's', input: z.object({}), prompt: () => 'p', env: ['PAYMENTS-URL'], tools: [] }),
    ).toThrow('defineAgent bad-env: env: "PAYMENTS-URL" is not an environment variable name');
  });

  it('fails when input, prompt, tools or a hook has not the shape a run uses (the CLI runs a module without a type check), naming the field and the value', () => {
    const lookup = defineTool({ name: 'lookup', description: 'd', input: z.object({}), effect: 'read', execute: async () => 1 });
    const base = { name: 'shapes', model: 'sim:savepoint-sim-1', system: 's', input: z.object({ day: z.string() }), prompt: () => 'p', tools: [lookup] };
    const loose = base as unknown as Record<string, unknown>;
    const define = (change: Record<string, unknown>) => () => defineAgent({ ...loose, ...change } as unknown as Parameters<typeof defineAgent>[0]);
    expect(define({ input: { day: z.string() } })).toThrow("defineAgent shapes: input must be a zod schema of the run's input (z.object({ … })), got an object with day");
    expect(define({ prompt: 'Refund it.' })).toThrow('defineAgent shapes: prompt must be a function from the run\'s input to its first user message ((input) => `…`), got "Refund it."');
    expect(define({ tools: undefined })).toThrow('defineAgent shapes: tools must be an array of defineTool(…)s, or (defineTool) => [defineTool(…), …], got undefined');
    expect(define({ deps: { payments: 1 } })).toThrow('defineAgent shapes: deps must be a function, got an object with payments');
    expect(define({ env: 'PAYMENTS_API_URL' })).toThrow('defineAgent shapes: env must be an array of the environment variables\' names deps reads ([\'PAYMENTS_API_URL\']), got "PAYMENTS_API_URL"');
  });

  it('fails when a tool has no execute, or a rule that is not a function, naming the tool and the field', () => {
    const lookup = { name: 'lookup', description: 'd', input: z.object({}), effect: 'read' as const, execute: async () => 1 };
    const define = (change: Record<string, unknown>) => () => defineTool({ ...lookup, ...change } as unknown as typeof lookup);
    expect(define({ execute: undefined, excute: async () => 1 })).toThrow('defineTool lookup: execute must be a function (args, context) => Promise<result>, got undefined');
    expect(define({ needsApproval: 'always' })).toThrow('defineTool lookup: needsApproval must be a function, got "always"');
    expect(define({ effect: 'write', aggregate: { amount: () => 1, threshold: 100 } })).toThrow('defineTool lookup: aggregate.key must be a function of the arguments, got undefined');
  });

  it('fails when approvals names a setting there is none of: a misspelt cap would be no cap', () => {
    const lookup = defineTool({ name: 'lookup', description: 'd', input: z.object({}), effect: 'read', execute: async () => 1 });
    const base = { name: 'capped', model: 'sim:savepoint-sim-1', system: 's', input: z.object({}), prompt: () => 'p', tools: [lookup] };
    expect(() => defineAgent({ ...base, approvals: { maxUnaprovedPerRun: 50_000 } as never })).toThrow(
      'defineAgent capped: approvals: "maxUnaprovedPerRun" is no setting (the one is maxUnapprovedPerRun, in minor units): a misspelt cap would be no cap',
    );
    expect(defineAgent({ ...base, approvals: { maxUnapprovedPerRun: 50_000 } }).approvals).toEqual({ maxUnapprovedPerRun: 50_000 });
  });
});

describe('defineAgentTool and withDev (the CLI runs a module without a type check)', () => {
  const lookup = defineTool({ name: 'lookup', description: 'd', input: z.object({}), effect: 'read', execute: async () => 1 });
  const notes = defineAgent({ name: 'notes', model: 'sim:savepoint-sim-1', system: 's', input: z.object({ text: z.string() }), prompt: () => 'p', tools: [lookup] });

  it('fails when the child agent is not an agent definition, the dollars are not a number or childInput is not a function, naming the tool and the field', () => {
    const base = { name: 'delegate', description: 'd', input: z.object({ text: z.string() }), agent: notes, budget: { maxDollars: 0.5, maxTokens: 10_000 } };
    const define = (change: Record<string, unknown>) => () => defineAgentTool({ ...base, ...change } as unknown as typeof base);
    expect(define({ agent: { name: 'notes' } })).toThrow('defineAgentTool delegate: agent must be an agent definition (made by defineAgent or withDev), got an object with name');
    expect(define({ budget: { maxDollars: '0.5', maxTokens: 10_000 } })).toThrow('defineAgentTool delegate: budget.maxDollars must be a number of dollars above 0 and at most 10000, got "0.5"');
    expect(define({ childInput: { text: 'x' } })).toThrow("defineAgentTool delegate: childInput must be a function from the call's arguments to the child run's input, got an object with text");
    expect(define({ agent: withDev(notes, {}), childInput: (args: { text: string }) => ({ text: args.text.trim() }) })().child!.input({ text: ' x ' })).toEqual({ text: 'x' });
  });

  it('fails when a dev part has the wrong type, or the agent is not one, naming the field and the value', () => {
    const dev = (change: Record<string, unknown>) => () => withDev(notes, change as never);
    expect(dev({ checkData: 'x' })).toThrow('withDev notes: checkData must be a function (path) => void that throws to refuse a world data file, got "x"');
    expect(dev({ world: { day: 1 } })).toThrow('withDev notes: world must be a function that starts the world, got an object with day');
    expect(dev({ policy: 'sim' })).toThrow('withDev notes: policy must be a function from a request to the next turn, got "sim"');
    expect(() => withDev(notes, undefined as never)).toThrow('withDev notes: dev must be { world, checkData, policy }, got undefined');
    expect(() => withDev({ name: 'notes' } as never, {})).toThrow('withDev: agent: expected an agent made by defineAgent (or withDev), got an object with name');
    expect(withDev(notes, { checkData: () => undefined }).dev?.checkData).toBeTypeOf('function');
  });
});
