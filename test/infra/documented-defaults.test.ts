import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { BatchStateMachine } from '../../infra/batch-state-machine.js';
import { extractDefinition, type CfnTemplateJson } from '../../local/template/asl.js';
import { MetricNames } from '../../lambdas/shared/metrics.js';
import { documentedDefault, leadingValue } from '../support/documented-default.js';
import { assertionApp, exampleTemplate } from './example-template.js';

/**
 * The `@default` of each construct prop a deployment leans on (timeouts, retries, concurrency,
 * retention of versions, alarm thresholds) is what the synthesized template holds when the prop is
 * left out: the doc's text is read from the source, the value from the example stack, which sets
 * none of them. The runtime options' defaults: test/unit/documented-defaults.test.ts.
 */
describe('documented defaults of the construct props', () => {
  const template = exampleTemplate();
  const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: Record<string, any> }>;
  const environmentOf = (step: string) => Object.values(resources).find((r) => r.Type === 'AWS::Lambda::Function' && r.Properties['Environment']?.Variables?.SAVEPOINT_STEP === step)!.Properties['Environment'].Variables as Record<string, string>;
  const alarmOf = (metric: string) => Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((alarm) => alarm.Properties).find((props) => props.MetricName === metric)!;
  /** A number in a `@default` text, by the pattern that captures it (`Duration.days(30)`, `(20 s)`). */
  const numberIn = (text: string, pattern: RegExp) => {
    const found = pattern.exec(text);
    if (!found) throw new Error(`@default ${JSON.stringify(text)} does not match ${pattern}`);
    return Number(found[1]!.replaceAll('_', ''));
  };
  const agentProp = (prop: string) => documentedDefault('infra/durable-agent.ts', 'DurableAgentProps', prop);

  it("DurableAgentProps' toolConcurrency: the tool calls of a turn run that many at once", () => {
    expect(leadingValue(agentProp('toolConcurrency'))).toBe(extractDefinition(template.toJSON() as CfnTemplateJson).States['ToolCalls']!['MaxConcurrency']);
  });

  it("DurableAgentProps' toolTimeout: the timeout CallTool and StartRun are told", () => {
    const seconds = numberIn(agentProp('toolTimeout'), /\((\d+) s\)/);
    expect(Number(environmentOf('call-tool')['TOOL_TIMEOUT_MS'])).toBe(seconds * 1000);
    expect(Number(environmentOf('start-run')['TOOL_TIMEOUT_MS'])).toBe(seconds * 1000);
  });

  it("DurableAgentProps' keepVersions: the versions the pruner keeps", () => {
    const pruned = JSON.parse(environmentOf('prune-versions')['PRUNE_VERSIONS']!) as Record<string, number>;
    expect(numberIn(agentProp('keepVersions'), /\((\d+)\)/)).toBe(pruned['refund-reconciler']);
  });

  it("DurableAgentProps' maxRecoveries: the recoveries in a row RecoverRun allows", () => {
    const bounds = JSON.parse(environmentOf('recover-run')['RECOVERY_BOUNDS']!) as Record<string, number>;
    expect(leadingValue(agentProp('maxRecoveries'))).toBe(bounds['refund-reconciler']);
  });

  it("ModelAccessProps' timeout and SavepointStackProps' modelTimeout: the model timeout CallModel is told", () => {
    const told = Number(environmentOf('call-model')['MODEL_TIMEOUT_MS']);
    expect(numberIn(documentedDefault('infra/model-access.ts', 'ModelAccessProps', 'timeout'), /^Duration\.seconds\((\d+)\)/) * 1000).toBe(told);
    expect(numberIn(documentedDefault('infra/stack.ts', 'SavepointStackProps', 'modelTimeout'), /^Duration\.seconds\((\d+)\)/) * 1000).toBe(told);
  });

  it.each([
    ['approvalWaitHours', () => alarmOf(MetricNames.OldestApprovalAgeSeconds).Threshold / 3600],
    ['dailySpendDollars', () => alarmOf(MetricNames.Dollars).Threshold],
    ['breakerOpenMinutes', () => alarmOf(MetricNames.BreakerOpen).EvaluationPeriods],
    ['costAnomalyStdDevs', () => numberIn(Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((alarm) => JSON.stringify(alarm.Properties)).find((text) => text.includes('ANOMALY_DETECTION_BAND'))!, /ANOMALY_DETECTION_BAND\(\w+, ?([\d.]+)\)/)],
  ] as const)("AlarmThresholds' %s: the alarm's threshold", (prop, actual) => {
    expect(leadingValue(documentedDefault('infra/observability.ts', 'AlarmThresholds', prop))).toBe(actual());
  });

  it("BatchStateMachineProps' executionTimeout: the batch state machine's own timeout", () => {
    const stack = new Stack(assertionApp(), 'Batches');
    new BatchStateMachine(stack, 'Batch');
    const definition = extractDefinition(Template.fromStack(stack).toJSON() as CfnTemplateJson);
    const days = numberIn(documentedDefault('infra/batch-state-machine.ts', 'BatchStateMachineProps', 'executionTimeout'), /^Duration\.days\((\d+)\)/);
    expect(definition.TimeoutSeconds).toBe(days * 24 * 3600);
  });
});
