/**
 * A tiny CDK app shaped like the real one: a retried/caught LambdaInvoke in a Choice loop, then a
 * .waitForTaskToken approval with a Catch on its rejection.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { extractStateMachine, type CfnTemplateJson } from '../../local/template/asl.js';
import { bindTasks, LocalEngine } from '../../local/engine/local-engine.js';
import { assertionApp } from '../support/assertion-app.js';

export function synthFixture(): CfnTemplateJson {
  // Bundling and the built-in CloudFormation validation are off: they cost seconds and test nothing here.
  const app = assertionApp();
  const stack = new Stack(app, 'LocalEngineFixture');
  const fn = (id: string, step: string) =>
    new lambda.Function(stack, id, {
      runtime: lambda.Runtime.NODEJS_24_X,
      handler: 'index.handler',
      code: lambda.Code.fromInline('exports.handler = async (e) => e;'),
      environment: { SAVEPOINT_STEP: step },
    });

  const work = new tasks.LambdaInvoke(stack, 'Work', { lambdaFunction: fn('StepA', 'a'), payloadResponseOnly: false, outputPath: '$.Payload' });
  work.addRetry({ errors: ['Agent.Transient'], maxAttempts: 3, interval: Duration.seconds(1), backoffRate: 2, jitterStrategy: sfn.JitterType.FULL });
  work.addCatch(new sfn.Pass(stack, 'HandleFailure'), { errors: ['Agent.Terminal'], resultPath: '$.failure' });

  const approve = new tasks.LambdaInvoke(stack, 'Approve', {
    lambdaFunction: fn('StepB', 'b'),
    integrationPattern: sfn.IntegrationPattern.WAIT_FOR_TASK_TOKEN,
    payload: sfn.TaskInput.fromObject({ taskToken: sfn.JsonPath.taskToken, count: sfn.JsonPath.numberAt('$.count') }),
    resultPath: '$.approval',
    taskTimeout: sfn.Timeout.duration(Duration.seconds(30)),
  });
  approve.addCatch(new sfn.Pass(stack, 'Rejected'), { errors: ['Approval.Rejected'], resultPath: '$.rejection' });
  approve.next(new sfn.Succeed(stack, 'Done'));

  const more = new sfn.Choice(stack, 'More?').when(sfn.Condition.numberLessThan('$.count', 3), work).otherwise(approve);
  new sfn.StateMachine(stack, 'Machine', {
    definitionBody: sfn.DefinitionBody.fromChainable(work.next(more)),
    timeout: Duration.minutes(5),
  });
  return Template.fromStack(stack).toJSON() as CfnTemplateJson;
}

export interface Approval {
  token: string;
  count: number;
}

/** Handlers for steps a and b plus the queue of approval tokens handed to step b. */
export function fixtureEngine(template: CfnTemplateJson, stepOverrides: Record<string, (payload: unknown) => Promise<unknown>> = {}) {
  const extracted = extractStateMachine(template);
  const calls: Record<string, number> = {};
  const approvals: Approval[] = [];
  const waiters: ((a: Approval) => void)[] = [];

  const steps: Record<string, (payload: unknown) => Promise<unknown>> = {
    // Input { id, count, failTimes?, fatal?, invalid? }: fails `failTimes` times with Agent.Transient first.
    a: async (payload) => {
      const p = payload as { id: string; count: number; failTimes?: number; fatal?: boolean; invalid?: boolean };
      calls[p.id] = (calls[p.id] ?? 0) + 1;
      if (calls[p.id]! <= (p.failTimes ?? 0)) throw named('Agent.Transient', `transient #${calls[p.id]}`);
      if (p.fatal) throw named('Agent.Terminal', 'card declined');
      if (p.invalid) throw named('Agent.InvalidInput', 'bad input');
      return { ...p, count: p.count + 1 };
    },
    b: async (payload) => {
      const { taskToken, count } = payload as { taskToken: string; count: number };
      const approval = { token: taskToken, count };
      const waiter = waiters.shift();
      if (waiter) waiter(approval);
      else approvals.push(approval);
      return { submitted: true };
    },
  };

  const engine = new LocalEngine({
    definition: extracted.definition,
    stateMachineArn: extracted.stateMachineArn,
    tasks: bindTasks(extracted.tasks, { ...steps, ...stepOverrides }),
    retryIntervalOverrides: { Work: 0 },
  });
  const nextApproval = () => {
    const queued = approvals.shift();
    return queued ? Promise.resolve(queued) : new Promise<Approval>((resolve) => waiters.push(resolve));
  };
  return { engine, extracted, nextApproval };
}

export function named(name: string, message: string): Error {
  const e = new Error(message);
  e.name = name;
  return e;
}
