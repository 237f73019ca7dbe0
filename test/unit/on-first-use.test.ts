import * as z from 'zod';
import { describe, expect, it } from 'vitest';
import { schemaOnFirstUse } from '../../lambdas/shared/on-first-use.js';
import { ForkRequest } from '../../lambdas/runs/fork.js';
import { RunRequest } from '../../lambdas/runs/run-request.js';

describe('schemaOnFirstUse (a harness schema made when first parsed with, not as its module loads)', () => {
  it('makes nothing until asked, then makes the schema once and hands out that one', () => {
    let made = 0;
    const Schema = schemaOnFirstUse(() => (made++, z.object({ n: z.number().int() }).strict()));
    expect(made).toBe(0);
    const first = Schema();
    expect(Schema()).toBe(first);
    expect(made).toBe(1);
    expect(first.parse({ n: 2 })).toEqual({ n: 2 });
  });

  it('refuses with the messages of the schema it makes: a run request that nests a fork request', () => {
    const refused = RunRequest().safeParse({ input: {}, fork: { from: 'parent-run', at: 0 }, extra: true });
    expect(refused.success).toBe(false);
    const issues = refused.error!.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    expect(issues).toContain(': Unrecognized key: "extra"');
    expect(issues.some((issue) => issue.startsWith('fork.at: '))).toBe(true);
    // The nested schema is the same one the fork request's own callers get.
    expect(RunRequest().shape.fork.unwrap()).toBe(ForkRequest());
  });
});
