import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineTool } from '../../lambdas/define.js';
import { HttpMessagesClient } from '../../lambdas/models/messages-client.js';

/**
 * A tool's input is what the model is given as JSON Schema, and every provider takes one object
 * schema: a schema it cannot be fails when the tool is defined, naming the tool — before, the run
 * failed at its first model call as a retried "network error" that opened the model's circuit.
 */
const tool = (input: z.ZodType) => defineTool({ name: 'look', description: 'Looks.', input, effect: 'read', execute: async () => ({}) });

describe('defineTool: input', () => {
  it.each([
    ['a string', z.string(), /^defineTool look: input must be an object schema \(z\.object\(\{ … \}\)\): .* \(got "string"\)$/],
    ['an array', z.array(z.string()), /input must be an object schema .*\(got "array"\)$/],
    ['a union of objects', z.union([z.object({ a: z.string() }), z.object({ b: z.number() })]), /input must be an object schema .*\(got "anyOf"\)$/],
    ['an object with a field JSON Schema cannot carry', z.object({ at: z.date() }), /^defineTool look: input cannot be given to a model as JSON Schema: /],
  ])('fails when it is %s', (_case, input, message) => {
    expect(() => tool(input)).toThrow(message);
  });

  it('takes an object, also one with defaults and transforms (the model is given its input side)', () => {
    expect(() => tool(z.object({ id: z.string(), limit: z.number().default(10) }).transform((args) => args.id))).not.toThrow();
  });
});

describe('HttpMessagesClient', () => {
  it('refuses a request whose tool schema is no object as invalid input, sending nothing, not as a network error to retry', async () => {
    let sent = 0;
    const client = new HttpMessagesClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', fetch: async () => (sent++, new Response('{}')) });
    const request = { model: 'm', max_tokens: 10, messages: [{ role: 'user' as const, content: 'hi' }], tools: [{ name: 'look', description: 'Looks.', input_schema: { type: 'string' } }] };
    await expect(client.createMessage(request)).rejects.toThrow(expect.objectContaining({ name: 'Agent.InvalidInput', message: expect.stringMatching(/input schema of tool look/) }));
    expect(sent).toBe(0);
  });
});
