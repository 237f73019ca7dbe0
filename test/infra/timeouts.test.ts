import { Duration } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { callToolTimeouts } from '../../infra/durable-agent.js';
import { MAX_TOOL_TIMEOUT_MS } from '../../lambdas/define.js';
import { LAMBDA_MAX_TIMEOUT_MS } from '../../lambdas/shared/limits.js';
import { EXAMPLE_AGENTS } from '../../infra/example.js';
import { SavepointStack } from '../../infra/stack.js';
import { assertionApp, exampleTemplate } from './example-template.js';

/**
 * Issue 20, item 9: the timeouts of the synthesized app, against the rules AWS applies to them.
 */
type Resource = { Type: string; Properties: Record<string, any>; DeletionPolicy?: string; UpdateReplacePolicy?: string };
type TaskState = { Type: string; Resource?: string; Parameters?: { FunctionName?: string }; TimeoutSeconds?: number; Retry?: { ErrorEquals: string[]; MaxAttempts?: number }[]; Catch?: { ErrorEquals: string[]; Next: string }[] };

let template: Template;
let resources: Record<string, Resource>;
let states: Record<string, TaskState>;

beforeAll(() => {
  template = exampleTemplate();
  resources = template.toJSON().Resources;
  const [machine] = Object.values(template.findResources('AWS::StepFunctions::StateMachine'));
  // The definition with each function version's Ref kept as `REF:<logical id>`.
  const parts = (machine!.Properties.DefinitionString as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
  const text = parts.map((part) => (typeof part === 'string' ? part : (part as { Ref: string }).Ref === 'AWS::Partition' ? 'aws' : `REF:${(part as { Ref: string }).Ref}`)).join('');
  states = withIterations(JSON.parse(text).States);
});

/** The top-level states and those of the tool calls' Map (state names are unique in a definition). */
function withIterations(top: Record<string, TaskState & { ItemProcessor?: { States: Record<string, TaskState> } }>): Record<string, TaskState> {
  return { ...top, ...top['ToolCalls']?.ItemProcessor?.States };
}

const lambdaTasks = () => Object.entries(states).filter(([, state]) => state.Type === 'Task' && state.Resource === 'arn:aws:states:::lambda:invoke');
const callbackTasks = () => Object.entries(states).filter(([, state]) => state.Type === 'Task' && state.Resource === 'arn:aws:states:::lambda:invoke.waitForTaskToken');
/** The Lambda function a Task invokes (through its version), and its timeout in seconds. */
function functionTimeoutOf(state: TaskState): number {
  const version = resources[state.Parameters!.FunctionName!.replace(/^REF:/, '')]!;
  expect(version.Type).toBe('AWS::Lambda::Version');
  return resources[version.Properties.FunctionName.Ref]!.Properties.Timeout as number;
}

describe('Task timeouts', () => {
  /**
   * A Task whose TimeoutSeconds is not longer than its Lambda's timeout gives up while the
   * function may still be running (and its cold start's Init phase, up to 10 s, is not part of the
   * function's timeout): Step Functions reports States.Timeout and the function's answer is lost.
   * ("Using timeouts to avoid stuck Step Functions workflow executions",
   * https://docs.aws.amazon.com/step-functions/latest/dg/sfn-stuck-execution.html.)
   */
  it('gives every Lambda Task more time than its function has, init included', () => {
    expect(lambdaTasks().length).toBeGreaterThanOrEqual(7);
    for (const [name, state] of lambdaTasks()) {
      expect(state.TimeoutSeconds! - functionTimeoutOf(state), `${name}: Task ${state.TimeoutSeconds} s, function ${functionTimeoutOf(state)} s`).toBeGreaterThanOrEqual(15);
    }
  });

  /**
   * States.Timeout on a Lambda Task: the invoke did not answer within the function's own timeout
   * and more, i.e. it was lost on the way. Every step is idempotent per (run, turn, call), so the
   * Task is retried like Lambda's own faults. On an approval it is the backstop having passed: not
   * retried (a retry would wait another eight days), caught, and recorded as an expired decision.
   */
  it('retries States.Timeout on every Lambda Task, a few times, and never on an approval', () => {
    for (const [name, state] of lambdaTasks()) {
      const retrier = state.Retry?.find((r) => r.ErrorEquals.includes('States.Timeout'));
      expect(retrier, name).toBeDefined();
      expect(retrier!.MaxAttempts, name).toBeLessThanOrEqual(3);
    }
    expect(callbackTasks().length).toBe(2);
    for (const [name, state] of callbackTasks()) {
      expect(state.Retry?.some((r) => r.ErrorEquals.includes('States.Timeout')), name).toBe(false);
      expect(state.Catch!.find((c) => c.ErrorEquals.includes('States.Timeout'))!.Next, name).not.toBe('RecordFailure');
    }
  });
});

describe('the approval API', () => {
  /**
   * API Gateway answers 504 after the integration timeout (29 s by default: "Amazon API Gateway
   * quotas", https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html). A function
   * still running then may decide the approval after the caller was told it failed: the function
   * must stop first, with its own answer.
   */
  it('stops the callback function before API Gateway stops waiting for it', () => {
    const methods = Object.values(resources).filter((resource) => resource.Type === 'AWS::ApiGateway::Method');
    expect(methods.length).toBeGreaterThan(0);
    for (const method of methods) {
      const integration = method.Properties.Integration;
      // A streamed response (the run events) decides nothing, and its integration waits the 15
      // minutes a stream may last; its function ends the stream before (test/infra/run-events.test.ts).
      if (integration.ResponseTransferMode === 'STREAM') continue;
      const target = JSON.stringify(integration.Uri).match(/"Fn::GetAtt":\["([A-Za-z0-9]+)","Arn"\]/)![1]!;
      const integrationMs = integration.TimeoutInMillis ?? 29_000;
      expect(resources[target]!.Properties.Timeout * 1000).toBeLessThan(integrationMs);
    }
  });
});

describe('the seal key', () => {
  /** The records outlive the stack; so must the key that verifies them. */
  it('is kept with the table: the same deletion and replacement policies', () => {
    const [table] = Object.values(template.findResources('AWS::DynamoDB::GlobalTable'));
    const keys = Object.values(template.findResources('AWS::SecretsManager::Secret')).filter((secret) => JSON.stringify(secret).includes('sealed'));
    expect(keys).toHaveLength(1);
    expect(table!.DeletionPolicy).toBe('Retain');
    expect({ DeletionPolicy: keys[0]!.DeletionPolicy, UpdateReplacePolicy: keys[0]!.UpdateReplacePolicy }).toEqual({ DeletionPolicy: table!.DeletionPolicy, UpdateReplacePolicy: table!.UpdateReplacePolicy });
  });
});

/**
 * Issue 22, item 2: CallTool's timeouts derive from the longest tool timeout (`toolTimeout`, which
 * the deployer sets from `maxToolTimeoutMs(agent)`: infra does not load the agent): the function
 * has 10 s beyond the tool, its Task 15 s beyond the function, a claim's lease 10 s beyond it.
 */
describe('CallTool timeouts', () => {
  const callToolOf = (synthesized: Template) => {
    const all = synthesized.toJSON().Resources as Record<string, Resource>;
    const stepFunction = (step: string) => Object.values(all).find((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.SAVEPOINT_STEP === step)!;
    const fn = stepFunction('call-tool');
    const [machine] = Object.values(synthesized.findResources('AWS::StepFunctions::StateMachine'));
    const text = ((machine!.Properties.DefinitionString as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1]).map((part) => (typeof part === 'string' ? part : 'X')).join('');
    const task = withIterations(JSON.parse(text).States)['CallTool']!;
    return { timeout: fn.Properties.Timeout as number, env: fn.Properties.Environment.Variables as Record<string, string>, task: task.TimeoutSeconds, startRunEnv: stepFunction('start-run').Properties.Environment.Variables as Record<string, string> };
  };

  it('fits the default tool timeout (20 s): a 30 s function, a 45 s Task, a 40 s lease', () => {
    expect(callToolOf(template)).toMatchObject({ timeout: 30, task: 45, env: { TOOL_LEASE_MS: '40000', TOOL_TIMEOUT_MS: '20000' } });
  });

  it('derives them from toolTimeout, and tells StartRun the timeout the agent must fit', () => {
    const stack = new SavepointStack(assertionApp(), 'SlowTools');
    stack.addAgent('Agent', { agentName: 'slow-tools', entry: EXAMPLE_AGENTS.refundReconciler, toolTimeout: Duration.minutes(2) });
    const callTool = callToolOf(Template.fromStack(stack));
    expect(callTool).toMatchObject({ timeout: 130, task: 145, env: { TOOL_LEASE_MS: '140000', TOOL_TIMEOUT_MS: '120000' } });
    expect(callTool.startRunEnv).toMatchObject({ TOOL_TIMEOUT_MS: '120000' });
  });

  it("gives the longest tool a tool may declare (MAX_TOOL_TIMEOUT_MS) a CallTool function within Lambda's 900 s", () => {
    expect(callToolTimeouts(Duration.millis(MAX_TOOL_TIMEOUT_MS)).lambda.toSeconds()).toBeLessThanOrEqual(LAMBDA_MAX_TIMEOUT_MS / 1000);
  });

  it('refuses a toolTimeout longer than a tool may wait, naming it', () => {
    expect(() => callToolTimeouts(Duration.minutes(15))).toThrow('toolTimeout must be from 1 ms to 840000 ms (a tool\'s longest timeoutMs), got 15 minutes');
  });
});
