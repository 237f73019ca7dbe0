import { Fn } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { LayerVersion } from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_AGENTS } from '../../infra/example.js';
import { SavepointStack } from '../../infra/stack.js';
import type { GenAiTracing } from '../../infra/tracing.js';
import { tracingConfigFromEnv } from '../../lambdas/telemetry/config.js';
import { assertionApp } from './example-template.js';
import { identityPolicies } from '../support/role-policies.js';

/** The `tracing` prop: the standard OTEL_* variables on every function, and the collector layer on each. */
function synth(tracing: (stack: SavepointStack) => GenAiTracing | undefined) {
  const stack = new SavepointStack(assertionApp(), 'Traced');
  stack.addAgent('Refunds', { agentName: 'refund-reconciler', entry: EXAMPLE_AGENTS.refundReconciler, tracing: tracing(stack) });
  return Template.fromStack(stack);
}

/** The agent's step functions; the ones its stack shares (infra/control-plane.ts) export no spans: they make no model or tool call. */
const stepFunctions = (template: Template) =>
  Object.entries(template.findResources('AWS::Lambda::Function')).filter(([id, fn]) => fn.Properties?.Environment?.Variables?.SAVEPOINT_STEP !== undefined && !id.startsWith('ControlPlane'));

describe('DurableAgent tracing', { timeout: 120_000 }, () => {
  it('through a collector layer: every step function gets the layer and exports to it on localhost', () => {
    const template = synth((stack) => ({
      collectorLayer: LayerVersion.fromLayerVersionArn(stack, 'Adot', 'arn:aws:lambda:us-east-1:901920570463:layer:aws-otel-collector-arm64-ver-0-117-0:1'),
      collectorConfigUri: '/var/task/collector.yaml',
    }));
    const functions = stepFunctions(template);
    // The agent's own eight (recovery and ExecutionStopped are the stack's: infra/recovery.ts).
    expect(functions.length).toBeGreaterThanOrEqual(8);
    for (const [id, fn] of functions) {
      expect(fn.Properties.Environment.Variables, id).toMatchObject({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_SERVICE_NAME: 'refund-reconciler',
        OPENTELEMETRY_COLLECTOR_CONFIG_URI: '/var/task/collector.yaml',
      });
      expect(fn.Properties.Environment.Variables.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, id).toBeUndefined();
      expect(fn.Properties.Layers, id).toEqual([expect.stringContaining('layer:aws-otel-collector')]);
    }
  });

  it('in-function export to an endpoint, with content opted in', () => {
    const template = synth(() => ({ endpoint: 'https://otlp.example.com', protocol: 'http/json', content: true }));
    for (const [id, fn] of stepFunctions(template)) {
      expect(fn.Properties.Environment.Variables, id).toMatchObject({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' });
      // The metrics go beside the spans unless turned off.
      expect(fn.Properties.Environment.Variables.OTEL_METRICS_EXPORTER, id).toBeUndefined();
      expect(fn.Properties.Layers, id).toBeUndefined();
    }
  });

  it('with metrics: false, the functions export spans only (OTEL_METRICS_EXPORTER=none)', () => {
    for (const [id, fn] of stepFunctions(synth(() => ({ endpoint: 'https://otlp.example.com', metrics: false })))) {
      expect(fn.Properties.Environment.Variables, id).toMatchObject({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com', OTEL_METRICS_EXPORTER: 'none' });
    }
  });

  it("lets the functions that end a run query its conversation only when traced (the budget checks' spans), Finalize always (the agent's report)", () => {
    const queries = (template: Template) => {
      const roles = new Set<string>();
      for (const policy of identityPolicies(template.toJSON().Resources)) {
        const statements = policy.document.Statement as { Action: string | string[]; Condition?: unknown }[];
        if (statements.some((statement) => [statement.Action].flat().includes('dynamodb:Query') && statement.Condition !== undefined)) {
          for (const role of policy.roles) roles.add(role);
        }
      }
      const functions = template.findResources('AWS::Lambda::Function');
      return Object.values(functions)
        .filter((fn) => roles.has((fn.Properties.Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0]))
        .map((fn) => fn.Properties.Environment?.Variables?.SAVEPOINT_STEP as string | undefined);
    };
    const traced = queries(synth(() => ({ endpoint: 'https://otlp.example.com' })));
    const untraced = queries(synth(() => undefined));
    expect(untraced).toContain('finalize');
    expect(traced).toContain('finalize');
    // ExecutionStopped queries a run's conversation either way (its child runs, to stop them), the
    // recovery and the sweeper too (a run's open turn: lambdas/ledger/open-turn.ts): tracing adds no function.
    for (const step of ['execution-stopped', 'recover-run', 'sweep']) expect(untraced).toContain(step);
    expect(traced.filter((step) => !untraced.includes(step)).sort()).toEqual([]);
  });

  it('is off by default: no OTEL variable on any function', () => {
    for (const [id, fn] of stepFunctions(synth(() => undefined))) expect(Object.keys(fn.Properties.Environment.Variables).filter((name) => name.startsWith('OTEL_')), id).toEqual([]);
  });

  it('fails when neither an endpoint nor a layer is given, naming the prop', () => {
    expect(() => synth(() => ({}))).toThrow(/tracing needs an endpoint or a collectorLayer/);
    expect(() => synth(() => ({ endpoint: 'https://otlp.example.com', collectorConfigUri: '/x.yaml' }))).toThrow(/tracing\.collectorConfigUri needs a collectorLayer/);
    // A signal's own URL given as the base would be posted to …/v1/traces/v1/traces (lambdas/telemetry/config.ts).
    expect(() => synth(() => ({ endpoint: 'https://otlp.example.com/v1/traces' }))).toThrow(/tracing\.endpoint is the collector's base URL, to which each signal's path \(\/v1\/traces, \/v1\/metrics\) is added: drop \/v1\/traces from "https:\/\/otlp\.example\.com\/v1\/traces"/);
    expect(() => synth(() => ({ endpoint: 'https://otlp.example.com/otlp' }))).not.toThrow();
  });

  it('fails when the endpoint is no absolute http(s) URL, naming the construct and the prop, as the functions would at their cold start', () => {
    // The first two synthesized, and the functions failed at their cold start on AWS; a host without
    // a scheme, or another scheme, is no URL the exporter posts to either.
    for (const endpoint of ['http://otlp example.com', 'https://otlp.example.com:99999', 'otlp.example.com', 'ftp://otlp.example.com']) {
      expect(() => synth(() => ({ endpoint }))).toThrow(`DurableAgent Refunds: tracing.endpoint ${JSON.stringify(endpoint)} is no absolute http(s) URL, which the OTLP/HTTP exporter posts to`);
      // The same check where the functions (and the CLI) read the variable (lambdas/telemetry/config.ts).
      expect(() => tracingConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })).toThrow(`OTEL_EXPORTER_OTLP_ENDPOINT: ${JSON.stringify(endpoint)} is no absolute http(s) URL`);
    }
    // A token is known at deploy time only (e.g. an imported value): left to the functions' own check.
    expect(() => synth(() => ({ endpoint: `https://${Fn.importValue('OtlpHost')}` }))).not.toThrow();
  });
});
