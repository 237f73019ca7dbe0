/**
 * What CloudFormation refuses of a template before it creates or updates a stack, by count: at most
 * 500 resources, 200 outputs and 200 parameters (lambdas/shared/limits.ts). One wording for the two
 * places that check it — savepoint/cdk at synth (infra/stack.ts), where a stack of many agents would
 * otherwise pass synth and fail at deploy, and the local twin at start and deploy
 * (local/aws/cloudformation-template.ts). The resources' message is CloudFormation's own ("Template
 * format error: Number of resources, 501, is greater than maximum allowed, 500"); the outputs' and
 * parameters' follow it (their exact wording is unverified here).
 */
import { NESTED_STACK_OPERATION_RESOURCE_QUOTA, STACK_OUTPUT_QUOTA, STACK_PARAMETER_QUOTA, STACK_RESOURCE_QUOTA } from './limits.js';

export interface TemplateCounts {
  readonly resources: number;
  readonly outputs: number;
  readonly parameters: number;
}

/** Each quota `counts` passes, as CloudFormation words its refusal; empty when the template fits. */
export function templateQuotaProblems(counts: TemplateCounts): string[] {
  const over = (what: string, count: number, quota: number) => (count > quota ? [`Template format error: Number of ${what}, ${count}, is greater than maximum allowed, ${quota}`] : []);
  return [...over('resources', counts.resources, STACK_RESOURCE_QUOTA), ...over('outputs', counts.outputs, STACK_OUTPUT_QUOTA), ...over('parameters', counts.parameters, STACK_PARAMETER_QUOTA)];
}

/**
 * The refusal of a stack operation over `resources` resources across a stack and its nested stacks
 * (NESTED_STACK_OPERATION_RESOURCE_QUOTA: every resource of every template, as a first deploy
 * creates them all), or none. CloudFormation's wording of it is unverified here.
 */
export function stackOperationProblem(resources: number): string | undefined {
  return resources > NESTED_STACK_OPERATION_RESOURCE_QUOTA
    ? `Limit exceeded: the stack operation would create ${resources} resources across the stack and its nested stacks, more than the ${NESTED_STACK_OPERATION_RESOURCE_QUOTA} one operation may`
    : undefined;
}
