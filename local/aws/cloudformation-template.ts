/**
 * What CloudFormation refuses of a template before it creates or updates a stack, where the local
 * stack would otherwise run what AWS never deploys. The local stack checks every template it
 * deploys (at its start and at each `deploy`: local/runtime/local-stack.ts):
 *
 *   - at most 500 resources ("Resources: Maximum number of resources that you can declare in your
 *     CloudFormation template: 500", https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html):
 *     "Template format error: Number of resources, N, is greater than maximum allowed, 500"; and at
 *     most 200 outputs and 200 parameters (the same page), worded alike
 *     (lambdas/shared/cloudformation-quotas.ts, which savepoint/cdk checks at synth too);
 *   - at most 2,500 resources created, updated or deleted by one operation across a stack and its
 *     nested stacks (the same page, "Nested stacks"), counted over every template of the tree
 *     (`nested`): a first deploy creates them all (lambdas/shared/limits.ts);
 *   - each Lambda function's `Timeout` one Lambda takes (local/aws/lambda-function-timeout.ts);
 *   - each Lambda function's environment variables within 4 KB (local/aws/lambda-environment-size.ts):
 *     not CloudFormation's own check but Lambda's, which fails the deploy all the same;
 *   - each REST API method's integration timeout within API Gateway's range, 15 minutes for a
 *     streamed response (local/aws/api-gateway-integration-timeout.ts): API Gateway's check;
 *   - each state machine's name within Step Functions' 80 characters
 *     (https://docs.aws.amazon.com/step-functions/latest/apireference/API_CreateStateMachine.html),
 *     and each EventBridge rule's schedule expression one EventBridge takes
 *     (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-scheduled-rule-pattern.html),
 *     lambdas/shared/aws-names.ts: the services' checks, which fail the deploy on the resource.
 */
import { stackOperationProblem, templateQuotaProblems } from '../../lambdas/shared/cloudformation-quotas.js';
import { AwsClientError } from './client-error.js';
import { integrationTimeoutProblem } from './api-gateway-integration-timeout.js';
import { assertEnvironmentFits } from './lambda-environment-size.js';
import { isFunctionTimeout, MAX_TIMEOUT_SECONDS } from './lambda-function-timeout.js';
import { MAX_STATE_MACHINE_NAME, scheduleProblem } from '../../lambdas/shared/aws-names.js';

/** What CloudFormation answers a create or update it refuses before it starts (error code ValidationError, HTTP 400). */
export class TemplateValidationError extends AwsClientError {
  constructor(message: string) {
    super('ValidationError', message);
  }
}

type Template = { Resources?: Record<string, unknown>; Outputs?: Record<string, unknown>; Parameters?: Record<string, unknown> };

/**
 * Refuses, as CloudFormation would, a template it would not deploy (the rules above), naming the
 * resource; with `nested`, the templates of its nested stacks (each checked alike) and the one
 * operation that deploys them all.
 */
export function assertDeployable(template: Template, nested: readonly Template[] = []): void {
  for (const child of nested) assertDeployable(child);
  const total = [template, ...nested].reduce((sum, each) => sum + Object.keys(each.Resources ?? {}).length, 0);
  const operation = stackOperationProblem(total);
  if (operation) throw new TemplateValidationError(operation);
  const resources = Object.entries(template.Resources ?? {});
  const [over] = templateQuotaProblems({ resources: resources.length, outputs: Object.keys(template.Outputs ?? {}).length, parameters: Object.keys(template.Parameters ?? {}).length });
  if (over) throw new TemplateValidationError(over);
  for (const [logicalId, resource] of resources) {
    const { Type, Properties } = resource as {
      Type?: unknown;
      Properties?: { Timeout?: unknown; Environment?: { Variables?: Record<string, unknown> }; Integration?: { TimeoutInMillis?: unknown; ResponseTransferMode?: unknown }; StateMachineName?: unknown; ScheduleExpression?: unknown };
    };
    const name = Properties?.StateMachineName;
    if (Type === 'AWS::StepFunctions::StateMachine' && typeof name === 'string' && (name.length < 1 || name.length > MAX_STATE_MACHINE_NAME)) {
      throw new TemplateValidationError(`Resource ${logicalId} (AWS::StepFunctions::StateMachine): Value '${name}' at 'name' failed to satisfy constraint: Member must have length less than or equal to ${MAX_STATE_MACHINE_NAME}`);
    }
    const schedule = Properties?.ScheduleExpression;
    const scheduleRefused = Type === 'AWS::Events::Rule' && typeof schedule === 'string' && scheduleProblem(schedule);
    if (scheduleRefused) throw new TemplateValidationError(`Resource ${logicalId} (AWS::Events::Rule): Parameter ScheduleExpression is not valid: ${JSON.stringify(schedule)} ${scheduleRefused}`);
    if (Type === 'AWS::ApiGateway::Method') {
      const problem = integrationTimeoutProblem(logicalId, Properties?.Integration);
      if (problem) throw new TemplateValidationError(problem);
    }
    if (Type !== 'AWS::Lambda::Function') continue;
    assertEnvironmentFits(logicalId, Properties?.Environment?.Variables ?? {});
    const timeout = Properties?.Timeout;
    if (timeout !== undefined && !isFunctionTimeout(timeout)) {
      throw new TemplateValidationError(`Resource ${logicalId} (AWS::Lambda::Function): Timeout must be a whole number of seconds from 1 to ${MAX_TIMEOUT_SECONDS}, got ${JSON.stringify(timeout)}`);
    }
  }
}
