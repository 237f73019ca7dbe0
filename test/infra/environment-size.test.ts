import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_AGENTS } from '../../infra/example.js';
import { SavepointStack } from '../../infra/stack.js';
import { environmentBytes, RESOLVED_REFERENCE_CHARS } from '../../lambdas/shared/lambda-environment.js';
import { LAMBDA_ENVIRONMENT_MAX_BYTES } from '../../lambdas/shared/limits.js';
import { assertionApp } from './example-template.js';

/**
 * Lambda's 4 KB of environment variables (lambdas/shared/limits.ts), which Lambda checks only when
 * CloudFormation creates the function, mid-deploy: savepoint/cdk checks it at synth, on every step
 * function, with the measure the local twin uses (local/aws/lambda-environment-size.ts).
 */
const price = (input: number) => ({ inputPerMTok: input, outputPerMTok: input * 5, cacheWritePerMTok: input * 1.25, cacheReadPerMTok: input / 10 });
/** `count` models' prices: about 110 bytes each in PRICES. */
const manyPrices = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, index) => [`openai:model-${String(index).padStart(3, '0')}`, price(index + 1)]));

describe("Lambda's 4 KB of environment variables, at synth", () => {
  it('measures as Lambda does: one JSON object, names and quotes included, references at their bound', () => {
    expect(environmentBytes({ A: 'b' })).toBe('{"A":"b"}'.length);
    expect(environmentBytes({ ARN: { 'Fn::GetAtt': ['Key', 'Arn'] } })).toBe(`{"ARN":""}`.length + RESOLVED_REFERENCE_CHARS);
    expect(environmentBytes({ E: 'é' })).toBe('{"E":""}'.length + 2);
  });

  it("leaves room in every function of the example agents' stack", () => {
    const stack = new SavepointStack(assertionApp(), 'Sizes');
    stack.addAgent('Agent', { agentName: 'sizes', entry: EXAMPLE_AGENTS.refundReconciler, prices: manyPrices(5) });
    const functions = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function')) as { Properties: { Environment?: { Variables?: Record<string, unknown> } } }[];
    expect(functions.length).toBeGreaterThanOrEqual(9);
    for (const fn of functions) expect(environmentBytes(fn.Properties.Environment?.Variables ?? {})).toBeLessThan(LAMBDA_ENVIRONMENT_MAX_BYTES / 2);
  });

  it('fails the synth of an agent whose variables are over 4 KB, naming the function and the largest variable', () => {
    const stack = new SavepointStack(assertionApp(), 'Oversized');
    stack.addAgent('Agent', { agentName: 'oversized', entry: EXAMPLE_AGENTS.refundReconciler, prices: manyPrices(40) });
    expect(() => Template.fromStack(stack)).toThrow(/Oversized\/Agent\/\S+ \(the \w+ function\): its environment variables measure \d{4,} bytes .* over Lambda's 4096; the largest are PRICES \(\d+ bytes\)/);
  });

  it('passes the synth just under the limit', () => {
    const stack = new SavepointStack(assertionApp(), 'Sized');
    stack.addAgent('Agent', { agentName: 'sized', entry: EXAMPLE_AGENTS.refundReconciler, prices: manyPrices(20) });
    expect(() => Template.fromStack(stack)).not.toThrow();
  });
});
