import { Duration } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { describe, expect, it } from 'vitest';
import { exampleStack } from '../../infra/example.js';
import { SavepointStack, type SavepointStackProps } from '../../infra/stack.js';
import { ErrorNames } from '../../lambdas/shared/errors.js';
import { assertionApp } from './example-template.js';
import { roleStatements } from '../support/role-policies.js';

const BEDROCK = 'bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0';

function synth(props: Pick<SavepointStackProps, 'model' | 'otherModels' | 'apiKeySecrets' | 'modelTimeout'> = {}) {
  const app = assertionApp();
  const template = Template.fromStack(exampleStack(app, props));
  const [machine] = Object.values(template.findResources('AWS::StepFunctions::StateMachine'));
  const parts = (machine!.Properties.DefinitionString as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
  const definition = JSON.parse(parts.map((part) => (typeof part === 'string' ? part : 'X')).join('')) as { States: Record<string, any> };
  return { template, states: definition.States };
}

/** The logical id of the function whose SAVEPOINT_STEP is `step`. */
function functionOf(template: Template, step: string): [string, any] {
  const found = Object.entries(template.findResources('AWS::Lambda::Function')).find(([, fn]) => fn.Properties.Environment?.Variables?.SAVEPOINT_STEP === step);
  if (!found) throw new Error(`no function for ${step}`);
  return found;
}

/** The IAM statements of the role of the function `logicalId`. */
function statementsOf(template: Template, logicalId: string): any[] {
  const fn = template.findResources('AWS::Lambda::Function')[logicalId]!;
  const role = (fn.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
  return roleStatements(template.toJSON().Resources, role);
}

describe('CallModel and a provider’s retry-after', () => {
  it('catches Agent.ModelRetryAfter before the catch-all, reads the seconds from the Cause, waits them (SecondsPath) and calls again', () => {
    const { states } = synth();
    const catches = states['CallModel'].Catch as { ErrorEquals: string[]; Next: string; ResultPath: string }[];
    expect(catches[0]).toEqual({ ErrorEquals: [ErrorNames.ModelRetryAfter], Next: 'ReadRetryAfter', ResultPath: '$.throttle' });
    expect(catches.at(-1)!.ErrorEquals).toEqual(['States.ALL']);
    // Not retried by a static Retry: its backoff could be shorter than the provider asked.
    expect(states['CallModel'].Retry.flatMap((r: { ErrorEquals: string[] }) => r.ErrorEquals)).not.toContain(ErrorNames.ModelRetryAfter);
    expect(states['ReadRetryAfter']).toEqual({ Type: 'Pass', Parameters: { 'cause.$': 'States.StringToJson($.throttle.Cause)' }, ResultPath: '$.throttle', Next: 'RetryAfterSeconds' });
    expect(states['RetryAfterSeconds']).toMatchObject({ Type: 'Pass', ResultPath: '$.throttle', Next: 'WaitRetryAfter' });
    expect(states['RetryAfterSeconds'].Parameters['seconds.$']).toBe("States.StringToJson(States.ArrayGetItem(States.StringSplit($.throttle.cause.errorMessage, ' '), 0))");
    expect(states['WaitRetryAfter']).toEqual({ Type: 'Wait', SecondsPath: '$.throttle.seconds', Next: 'CallModel' });
  });
});

describe('model access', () => {
  it('grants bedrock:InvokeModel to CallModel only, on the configured inference profile and the model it routes to', () => {
    const { template } = synth({ model: BEDROCK });
    const [callModel] = functionOf(template, 'call-model');
    const bedrock = statementsOf(template, callModel).filter((s) => JSON.stringify(s.Action).includes('bedrock:'));
    expect(bedrock).toHaveLength(1);
    expect(bedrock[0].Action).toBe('bedrock:InvokeModel');
    const resources = JSON.stringify(bedrock[0].Resource);
    expect(resources).toContain('inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0');
    expect(resources).toContain(':bedrock:*::foundation-model/anthropic.claude-sonnet-4-5-20250929-v1:0');
    expect(resources).not.toContain('"*"');
    for (const step of ['start-run', 'budget-check', 'call-tool', 'finalize', 'request-approval']) {
      expect(JSON.stringify(statementsOf(template, functionOf(template, step)[0]))).not.toContain('bedrock:');
    }
    // The stack's model reaches StartRun, which resolves each run's model.
    expect(functionOf(template, 'start-run')[1].Properties.Environment.Variables.MODEL).toBe(BEDROCK);
    // No simulator parameter for a real model.
    expect(template.toJSON().Parameters?.ModelApiUrl).toBeUndefined();
  });

  it('grants an application inference profile, and the foundation models behind it only through that profile', () => {
    const profile = 'arn:aws:bedrock:us-east-1:111122223333:application-inference-profile/a1b2c3d4e5f6';
    const { template } = synth({ model: `bedrock:${profile}` });
    const [callModel] = functionOf(template, 'call-model');
    const bedrock = statementsOf(template, callModel).filter((s) => JSON.stringify(s.Action).includes('bedrock:'));
    // The profile itself; and every foundation model, on the condition that the call comes through it.
    expect(bedrock).toHaveLength(2);
    expect(bedrock[0]).toMatchObject({ Action: 'bedrock:InvokeModel', Resource: profile });
    expect(bedrock[1]).toMatchObject({ Action: 'bedrock:InvokeModel', Condition: { StringEquals: { 'bedrock:InferenceProfileArn': profile } } });
    expect(JSON.stringify(bedrock[1].Resource)).toContain(':bedrock:*::foundation-model/*');
    // A model named by id or by a system-defined profile gets no conditional statement.
    const named = statementsOf(synth({ model: BEDROCK }).template, functionOf(synth({ model: BEDROCK }).template, 'call-model')[0]).filter((s) => JSON.stringify(s.Action).includes('bedrock:'));
    expect(named.every((s) => s.Condition === undefined)).toBe(true);
  });

  it('lets only the model-calling functions (CallModel, Compact) read the API key secret, names it by ARN, and never holds a key', () => {
    const { template } = synth({ model: 'anthropic:claude-sonnet-4-5', apiKeySecrets: { anthropic: 'savepoint/anthropic-api-key' } });
    const [callModel, fn] = functionOf(template, 'call-model');
    // Reads of the API key's secret (the approvals' link key is another secret, read by the approval functions).
    const reads = (id: string) =>
      statementsOf(template, id).filter((s) => JSON.stringify(s.Action).includes('secretsmanager:GetSecretValue') && JSON.stringify(s.Resource).includes('anthropic-api-key'));
    expect(reads(callModel)).toHaveLength(1);
    expect(JSON.stringify(reads(callModel)[0].Resource)).toContain('secret:savepoint/anthropic-api-key');
    expect(JSON.stringify(fn.Properties.Environment.Variables.ANTHROPIC_API_KEY_SECRET_ARN)).toContain('secret:savepoint/anthropic-api-key');
    // Compaction is a model call too: its function reads the key as CallModel's does; no other one does.
    const [compact] = functionOf(template, 'compact');
    expect(reads(compact)).toHaveLength(1);
    for (const [id] of Object.entries(template.findResources('AWS::Lambda::Function')).filter(([id]) => id !== callModel && id !== compact)) expect(reads(id)).toEqual([]);
    // No key anywhere: not a parameter, not a variable.
    const text = JSON.stringify(template.toJSON());
    expect(text).not.toMatch(/ModelApiKey|ANTHROPIC_API_KEY"|MODEL_API_KEY/);
    // The stack makes no secret with a value in it (the approval link key is generated by Secrets Manager).
    for (const secret of Object.values(template.findResources('AWS::SecretsManager::Secret'))) {
      expect(secret.Properties.SecretString).toBeUndefined();
      expect(secret.Properties.GenerateSecretString).toBeDefined();
    }
  });

  it("fails at synth for an apiKeySecrets provider that takes no key, or a secret's name Secrets Manager would refuse, naming the stack, the prop and the value", () => {
    const stack = (id: string, apiKeySecrets: object) => () => new SavepointStack(assertionApp(), id, { apiKeySecrets });
    // The first was ignored (the key never reached CallModel); the second synthesized, and the first model call failed on AWS.
    expect(stack('Unknown', { antropic: 'savepoint/anthropic-api-key' })).toThrow('SavepointStack Unknown: apiKeySecrets.antropic: not a provider that takes an API key (those are anthropic, openai)');
    expect(stack('Spaced', { anthropic: 'anthropic key' })).toThrow('SavepointStack Spaced: apiKeySecrets.anthropic: "anthropic key" is no secret name Secrets Manager takes (1 to 512 letters, digits and /_+=.@-)');
    expect(stack('Arn', { openai: 'arn:nope' })).toThrow(/^SavepointStack Arn: apiKeySecrets\.openai: "arn:nope" is no secret ARN/);
  });

  it("fails at synth for an agent's models.apiKeySecrets provider that takes no key, naming the agent's construct id and the prop", () => {
    const stack = new SavepointStack(assertionApp(), 'AgentKeys');
    const key = Secret.fromSecretNameV2(stack, 'Key', 'savepoint/anthropic-api-key');
    // It was ignored: the agent synthesized, and its key never reached CallModel.
    expect(() => stack.addAgent('Refunds', { agentName: 'refunds', entry: 'agent.ts', models: { model: 'anthropic:claude-sonnet-4-5', apiKeySecrets: { antropic: key } as object } })).toThrow(
      'DurableAgent Refunds: models.apiKeySecrets.antropic: not a provider that takes an API key (those are anthropic, openai)',
    );
  });

  it("refuses the stack's invalid model or otherModels spec at synth time, naming the stack, the prop and the value", () => {
    const stack = (id: string, props: SavepointStackProps) => () => new SavepointStack(assertionApp(), id, props);
    // The model failed naming neither the stack nor the prop; otherModels at the first addAgent, as the agent's models.otherModels.
    expect(stack('Model', { model: 'claude' })).toThrow('SavepointStack Model: model: invalid model spec "claude": expected "provider:model-id" with provider one of sim, anthropic, bedrock, openai (e.g. "anthropic:claude-sonnet-4-6")');
    expect(stack('Other', { otherModels: ['anthropic:claude-haiku-4-5', 'gpt:5'] })).toThrow('SavepointStack Other: otherModels[1]: invalid model spec "gpt:5": unknown provider "gpt"; expected one of sim, anthropic, bedrock, openai');
  });
});

/**
 * Issue 20, item 3: the model timeout is a prop; the model-calling functions' Lambda timeout and
 * their Tasks' TimeoutSeconds derive from it, each with its margin, within Lambda's 900 s ("Lambda
 * quotas": function timeout 900 seconds, https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html).
 */
describe('the model timeout', () => {
  const timeouts = (props: Pick<SavepointStackProps, 'modelTimeout'>) => {
    const { template, states } = synth(props);
    return ['call-model', 'compact'].map((step) => {
      const [, fn] = functionOf(template, step);
      return { step, lambda: fn.Properties.Timeout, env: fn.Properties.Environment.Variables.MODEL_TIMEOUT_MS, task: states[step === 'call-model' ? 'CallModel' : 'Compact'].TimeoutSeconds };
    });
  };

  it('is 60 s by default: the functions get 75 s, their Tasks 90 s', () => {
    for (const t of timeouts({})) expect(t, t.step).toMatchObject({ lambda: 75, env: '60000', task: 90 });
  });

  it('sets the adapters\' timeout and derives the function and Task timeouts from it', () => {
    for (const t of timeouts({ modelTimeout: Duration.minutes(10) })) expect(t, t.step).toMatchObject({ lambda: 615, env: '600000', task: 630 });
  });

  it('fails at synth when no Lambda can hold it, naming the prop and the value', () => {
    expect(() => synth({ modelTimeout: Duration.seconds(900) })).toThrow(
      'SavepointStack Savepoint: modelTimeout must be a whole number of milliseconds from 1000 to 885000 (Lambda\'s 900 s less 15000 ms for the step around the call), got 900000 (15 minutes)',
    );
    // At the stack's construction, before any agent is added.
    expect(() => new SavepointStack(assertionApp(), 'Alone', { modelTimeout: Duration.millis(500) })).toThrow('SavepointStack Alone: modelTimeout must be a whole number of milliseconds from 1000 to 885000');
  });
});
