import { Stack, Validations, type CfnResource } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import type { IConstruct } from 'constructs';
import { StepFunction } from './step-function.js';
import { topLevelStack } from './top-level-stack.js';

/**
 * The cdk-nag findings (AwsSolutions and Serverless packs) a DurableAgent acknowledges, each on the
 * narrowest construct it concerns, with the reason. Everything else nag reports is fixed in the
 * constructs; test/infra/nag.test.ts keeps the count of unacknowledged findings at zero.
 */
export function acknowledgeNagFindings(agent: IConstruct, parts: { stateMachine: StateMachine; stateMachineName: string; api?: RestApi }): void {
  const ack = (scope: IConstruct, id: string, reason: string) => Validations.of(scope).acknowledge({ id, reason });
  const logicalId = (construct: IConstruct) => Stack.of(construct).getLogicalId(construct.node.defaultChild as CfnResource);

  // With the agent's own functions, those of the stack it shares (infra/control-plane.ts).
  const controlPlanes = [...new Set([Stack.of(agent), topLevelStack(agent)])].flatMap((stack) => stack.node.tryFindChild('ControlPlane') ?? []);
  const scopes = [agent, ...controlPlanes];
  const functions = scopes.flatMap((scope) => scope.node.findAll()).filter((node): node is StepFunction => node instanceof StepFunction);
  const asynchronous = new Set(scopes.flatMap((scope) => scope.node.findAll()).filter((node) => node.node.id === 'EventInvokeConfig').map((node) => node.node.scope));
  for (const fn of functions) {
    // The role is the function's sibling (infra/inline-policy-role.ts): its findings are acknowledged on it.
    for (const scope of [fn, ...(fn.role ? [fn.role] : [])]) acknowledgeFunctionRole(scope);
    ack(
      fn,
      'Serverless-LambdaDLQ',
      asynchronous.has(fn)
        ? 'Invoked asynchronously by EventBridge: failed invocations go to an on-failure destination (the failed-events SQS queue, alarmed), which supersedes a DLQ and also carries the error.'
        : 'Invoked synchronously (by a Step Functions Task, or by API Gateway): a failure returns to the caller — the state machine retries it and records it through its Catch; the API returns it — so there is nothing for a DLQ to hold.',
    );
  }
  for (const pruner of controlPlanes.flatMap((scope) => scope.node.tryFindChild('PruneVersionsFunction') ?? []).filter((node): node is StepFunction => node instanceof StepFunction)) {
    // Acknowledged on the function and on its role, where the inline statement is read (infra/inline-policy-role.ts).
    for (const scope of [pruner, ...(pruner.role ? [pruner.role] : [])]) {
      ack(
        scope,
        'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:lambda:<AWS::Region>:<AWS::AccountId>:function:*]',
        "The version pruner's ListVersionsByFunction and DeleteFunction, conditioned on the function's savepoint:stack tag (ABAC): only the stack's agents' functions, whose ARNs would overflow an inline policy (infra/control-plane.ts).",
      );
    }
  }
  function acknowledgeFunctionRole(fn: IConstruct): void {
    ack(
      fn,
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      'AWSLambdaBasicExecutionRole grants only logs:CreateLogGroup/CreateLogStream/PutLogEvents; the function writes to its own log group with a retention.',
    );
    ack(fn, 'AwsSolutions-IAM5[Resource::*]', 'xray:PutTraceSegments and xray:PutTelemetryRecords (active tracing) support no resource-level permissions.');
    // The same statements, now inline in the role, where this rule reads them (AwsSolutions-IAM5 names each wildcard, acknowledged one by one).
    ack(
      fn,
      'Serverless-LambdaStarPermissions',
      'Each wildcard is acknowledged under AwsSolutions-IAM5 with its reason: X-Ray actions support no resource-level permissions; executions are named by run ids known only at run time; ledger keys are held by dynamodb:LeadingKeys conditions.',
    );
  }
  for (const scope of scopes) {
    ack(
      scope,
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:${parts.stateMachineName}:*]`,
      "Executions of the agent's own state machine (StartRun resumes, the sweeper describes): execution names are run ids, known only at run time.",
    );
  }

  const machine = parts.stateMachine;
  // Its role is its sibling (infra/agent-state-machine.ts): the role's findings are acknowledged with the machine's.
  const machineScopes = [machine, machine.role];
  for (const machine of machineScopes) ack(machine, 'AwsSolutions-IAM5[Resource::*]', 'Granted by CDK for X-Ray tracing and CloudWatch Logs delivery of the state machine; those actions support no resource-level permissions.');
  for (const fn of functions.filter((each) => agent.node.findAll().includes(each))) {
    // Tasks invoke the function's published version (infra/agent-state-machine.ts); LambdaInvoke adds `<version ARN>:*`.
    for (const id of [`<${logicalId(fn)}.Arn>:*`, ...(fn.node.tryFindChild('CurrentVersion') ? [`<${logicalId(fn.currentVersion)}>:*`] : [])]) {
      for (const machine of machineScopes) ack(machine, `AwsSolutions-IAM5[Resource::${id}]`, 'LambdaInvoke grants the function and its versions/aliases (ARN:*): only this agent’s own step functions.');
    }
  }

  // The queues may be the stack's (infra/control-plane.ts), shared by its agents.
  for (const queue of [agent, topLevelStack(agent)].flatMap((scope) => scope.node.findAll()).filter((node): node is Queue => node instanceof Queue)) {
    ack(queue, 'AwsSolutions-SQS3', 'This queue is itself a dead-letter queue (of an EventBridge target) or an on-failure destination (of a Lambda function); it is alarmed on any message.');
    ack(queue, 'Serverless-SQSRedrivePolicy', 'A dead-letter queue needs no dead-letter queue of its own: nothing consumes it automatically; an operator reads and replays it (the runbook, docs/operating-on-aws.md).');
  }

  // The approval page: a person opens it from a signed link, which is the credential (an HMAC over
  // the approval and the approver, expiring, single use); IAM cannot sign a click from e-mail.
  // The stack's API (infra/stack-api.ts) is its control plane's.
  for (const method of scopes.flatMap((scope) => scope.node.findAll()).filter((node) => node.node.path.includes('/decide/{approvalId}/') && (node.node.id === 'GET' || node.node.id === 'POST'))) {
    ack(method, 'AwsSolutions-APIG4', 'The approval page is authorized by its signed, expiring, single-use link (verified by the handler before anything is shown or decided); a GET never decides.');
    ack(method, 'AwsSolutions-COG4', 'People decide through signed links, not a Cognito user pool; machines use the IAM-authorized /approvals routes.');
  }
  // The ledger (and its seal key) may be the stack's, shared by its agents (nested ones too).
  for (const secret of topLevelStack(agent).node.findAll().filter((node) => node.node.path.endsWith('/Ledger/SealKey'))) {
    ack(secret, 'AwsSolutions-SMG4', 'Every ledger record is sealed with this key: rotating it would make every sealed record fail verification. Key versions in the seal are the upgrade path (docs/guarantees.md).');
  }
  for (const secret of topLevelStack(agent).node.findAll().filter((node) => node.node.path.endsWith('/ControlPlane/LinkKey'))) {
    ack(secret, 'AwsSolutions-SMG4', 'Rotated by an operator with put-secret-value (no rotation function: the key is random bytes): the previous version still verifies the links already sent for 7 days, the longest an approval waits (docs/approvals.md: rotating the keys).');
  }

  const api = parts.api;
  if (api) {
    ack(
      api,
      'AwsSolutions-APIG2',
      'The approval handler validates every request itself (a strict zod schema for the body, the approval-id pattern, content type and size) and answers 400/413/415 with the reason; an API Gateway model would be a second copy to drift.',
    );
    ack(api, 'AwsSolutions-APIG3', 'Every method but the approval page requires IAM (SigV4) authorization; the stage is throttled and the page\'s methods have a lower throttle of their own. A WAF web ACL is the deployer\'s choice: DurableAgent prop approvalPage.webAclArn attaches one.');
    ack(api, 'AwsSolutions-COG4', 'The approval API is for operators and machines of this AWS account: IAM (SigV4) authorization, not a Cognito user pool.');
  }
}
