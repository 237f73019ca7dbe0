import { resolve } from 'node:path';
import { App, Duration } from 'aws-cdk-lib';
import { Schedule } from 'aws-cdk-lib/aws-events';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertionApp, exampleTemplate } from './example-template.js';
import { SavepointStack } from '../../infra/stack.js';
import { ErrorNames, RETRYABLE_ERRORS } from '../../lambdas/shared/errors.js';
import { Steps } from '../../lambdas/shared/steps.js';
import { identityPolicies } from '../support/role-policies.js';
import { scratchDir } from '../support/scratch.js';
import { refundReconciler } from '../../agents/refund-reconciler/agent.js';
import { API_METHODS } from '../../lambdas/adapters/api-methods.js';
import { restApisOf } from '../../local/aws/iam/api-gateway.js';

type State = {
  Type: string;
  Resource?: string;
  Parameters?: Record<string, unknown>;
  Retry?: { ErrorEquals: string[]; JitterStrategy?: string; MaxDelaySeconds?: number; BackoffRate?: number; MaxAttempts?: number; IntervalSeconds?: number }[];
  Catch?: { ErrorEquals: string[]; Next: string; ResultPath?: string }[];
  TimeoutSeconds?: number;
  Next?: string;
  ItemProcessor?: { StartAt: string; States: Record<string, State> };
  ItemsPath?: string;
  ItemSelector?: Record<string, unknown>;
  MaxConcurrency?: number;
  ResultPath?: string | null;
};

let template: Template;
let states: Record<string, State>;
let definition: { StartAt: string; States: Record<string, State>; QueryLanguage?: string };

beforeAll(() => {
  template = exampleTemplate();
  const [machine] = Object.values(template.findResources('AWS::StepFunctions::StateMachine'));
  // The definition is a Fn::Join of strings, the partition and function ARNs.
  const parts = (machine!.Properties.DefinitionString as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
  const resolve = (part: unknown) => (typeof part === 'string' ? part : JSON.stringify(part) === '{"Ref":"AWS::Partition"}' ? 'aws' : 'FUNCTION_ARN');
  definition = JSON.parse(parts.map(resolve).join(''));
  // The states of the tool calls' Map beside the top-level ones (state names are unique in a definition).
  states = { ...definition.States, ...definition.States['ToolCalls']?.ItemProcessor?.States };
});

describe('the state machine', () => {
  it('is a Standard state machine with X-Ray tracing and logging', () => {
    template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      StateMachineType: 'STANDARD',
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: Match.objectLike({ Level: 'ALL', IncludeExecutionData: false }),
    });
  });

  it('is JSONPath only, so the local engine runs the same definition', () => {
    expect(definition.QueryLanguage ?? 'JSONPath').toBe('JSONPath');
    const text = JSON.stringify(definition);
    expect(text).not.toContain('"Assign"');
    expect(text).not.toContain('{%');
  });

  it('runs the loop StartRun → CallModel → tool calls → CallModel, which decides before each call (the first included)', () => {
    expect(definition.StartAt).toBe('StartRun');
    expect(states['StartRun']!.Next).toBe('StartOrResume');
    expect((states['StartOrResume'] as unknown as { Choices: { Next: string }[] }).Choices.map((rule) => rule.Next)).toEqual(['CallModel']);
    // StartRun's answer is the state the loop starts from (no Pass state to shape it): the run's id
    // and what StartRun decided, and the first decision's history estimate where CallModel reads it.
    expect(states['StartRun']).toMatchObject({
      ResultPath: '$',
      ResultSelector: {
        run: { result: { 'runId.$': '$.Payload.runId', 'action.$': '$.Payload.action', 'status.$': '$.Payload.status' } },
        budget: { result: { 'history.$': '$.Payload.history' } },
      },
    });
    expect(states['CallModel']).toMatchObject({ Parameters: { Payload: { 'runId.$': '$.run.result.runId', 'history.$': '$.budget.result.history' } } });
    expect(states['SeedHistory']).toBeUndefined();
    // No state but CallModel decides: the BudgetCheck function stays deployed for older versions' executions, invoked by none of this one's states.
    expect(states['BudgetCheck']).toBeUndefined();
    expect(states['ContinueOrStop']).toBeUndefined();
    expect(states['CallModel']!.Next).toBe('ToolCallsOrStop');
    expect((states['ToolCallsOrStop'] as unknown as { Default: string }).Default).toBe('ToolCalls');
    expect(states['ToolCalls']!.Next).toBe('CallModel');
    expect(states['ResumeToolCalls']!.Next).toBe('ToolCalls');
    // One iteration per call, starting at CallTool (no Choice in front of it: a billed transition
    // per call); a call that needs approval is caught into the wait, which goes back to CallTool.
    const iteration = definition.States['ToolCalls']!.ItemProcessor!;
    expect(iteration.StartAt).toBe('CallTool');
    expect(Object.keys(iteration.States).sort()).toEqual(['AwaitChildRun', 'CallTool', 'ReadSettleWait', 'RequestApproval', 'SettleSeconds', 'WaitSettle']);
    expect((states['CallTool'] as { Catch: unknown[] }).Catch).toContainEqual({ ErrorEquals: [ErrorNames.ApprovalNeeded], Next: 'RequestApproval', ResultPath: '$.approval' });
    expect(definition.States['ToolCalls']!.ItemSelector).toMatchObject({ approval: false });
    expect(states['RequestApproval']!.Next).toBe('CallTool');
    expect((states['CallTool'] as { End?: boolean }).End).toBe(true);
  });

  it('waits for an agent tool\'s child run on a task token, in CallTool\'s own function, then records it in CallTool (Agent.ChildRunPending)', () => {
    expect((states['CallTool'] as { Catch: unknown[] }).Catch).toContainEqual({ ErrorEquals: [ErrorNames.ChildRunPending], Next: 'AwaitChildRun', ResultPath: '$.child' });
    const wait = states['AwaitChildRun'] as Record<string, any>;
    expect(wait.Resource).toMatch(/:lambda:invoke\.waitForTaskToken$/);
    expect(wait.Parameters.Payload).toMatchObject({ 'runId.$': '$.runId', 'turn.$': '$.turn', 'call.$': '$.call', 'taskToken.$': '$$.Task.Token' });
    expect(wait.Parameters.FunctionName).toEqual(states['CallTool']!.Parameters!['FunctionName']);
    expect(wait.Next).toBe('CallTool');
    // Bounded by the execution's own timeout (10 days), not the 60 s a Task without one gets locally.
    expect(wait.TimeoutSeconds).toBe(10 * 24 * 3600);
  });

  it('waits out a settling send for the seconds CallTool names (Agent.SettleWait, caught into a Wait), not on a Retry whose attempts a long settle time would exhaust', () => {
    const iteration = definition.States['ToolCalls']!.ItemProcessor!.States as Record<string, any>;
    expect(iteration['CallTool'].Catch).toEqual([
      { ErrorEquals: [ErrorNames.SettleWait], Next: 'ReadSettleWait', ResultPath: '$.settle' },
      { ErrorEquals: [ErrorNames.ApprovalNeeded], Next: 'RequestApproval', ResultPath: '$.approval' },
      { ErrorEquals: [ErrorNames.ChildRunPending], Next: 'AwaitChildRun', ResultPath: '$.child' },
    ]);
    expect(iteration['CallTool'].Retry.flatMap((r: { ErrorEquals: string[] }) => r.ErrorEquals)).not.toContain(ErrorNames.SettleWait);
    expect(iteration['ReadSettleWait']).toEqual({ Type: 'Pass', Parameters: { 'cause.$': 'States.StringToJson($.settle.Cause)' }, ResultPath: '$.settle', Next: 'SettleSeconds' });
    expect(iteration['SettleSeconds'].Parameters['seconds.$']).toBe("States.StringToJson(States.ArrayGetItem(States.StringSplit($.settle.cause.errorMessage, ' '), 0))");
    expect(iteration['WaitSettle']).toEqual({ Type: 'Wait', SecondsPath: '$.settle.seconds', Next: 'CallTool' });
  });

  it("runs a turn's tool calls concurrently, up to the agent's toolConcurrency, keeping no result in the state", () => {
    const map = states['ToolCalls']!;
    expect(map).toMatchObject({ Type: 'Map', ItemsPath: '$.budget.result.calls', MaxConcurrency: 10, ResultPath: null });
    // Each call is a pointer, with CallModel's result for the turn: what its write hands the calls (lambdas/steps/handed-step.ts).
    expect(map.ItemSelector).toEqual({ 'runId.$': '$.run.result.runId', 'turn.$': '$$.Map.Item.Value.turn', 'call.$': '$$.Map.Item.Value.call', approval: false, 'made.$': '$.budget.result' });
  });

  it('refuses a toolConcurrency an inline Map cannot run, naming it', () => {
    const app = assertionApp();
    const stack = new SavepointStack(app, 'Concurrency');
    expect(() => stack.addAgent('Agent', { agentName: 'a', entry: 'agent.ts', toolConcurrency: 41 })).toThrow(/^DurableAgent Agent: toolConcurrency must be an integer from 1 to 40.*got 41$/);
    expect(() => stack.addAgent('Other', { agentName: 'b', entry: 'agent.ts', toolConcurrency: 0 })).toThrow(/^DurableAgent Other: toolConcurrency .*got 0$/);
  });

  it('retries the model call on throttling and transient faults, with full jitter and a max delay', () => {
    const retry = states['CallModel']!.Retry!;
    const ours = retry.filter((retrier) => retrier.ErrorEquals.some((name) => name.startsWith('Agent.')));
    expect(ours.map((retrier) => retrier.ErrorEquals).flat().sort()).toEqual([ErrorNames.CircuitOpen, ErrorNames.ModelThrottled, ErrorNames.Transient].sort());
    for (const retrier of ours.filter((r) => !r.ErrorEquals.includes(ErrorNames.CircuitOpen))) {
      expect(retrier).toMatchObject({ JitterStrategy: 'FULL', BackoffRate: 2 });
      expect(retrier.MaxDelaySeconds).toBeGreaterThan(0);
    }
  });

  it('retries tool calls on transient faults, held leases and an open circuit only', () => {
    const names = states['CallTool']!.Retry!.flatMap((retrier) => retrier.ErrorEquals).filter((name) => name.startsWith('Agent.'));
    expect(names.sort()).toEqual([ErrorNames.CircuitOpen, ErrorNames.LeaseHeld, ErrorNames.Transient].sort());
  });

  it('waits out an open circuit at the cooldown, without jitter, instead of calling the provider', () => {
    for (const name of ['CallModel', 'CallTool']) {
      const retrier = states[name]!.Retry!.find((r) => r.ErrorEquals.includes(ErrorNames.CircuitOpen))!;
      expect(retrier).toMatchObject({ IntervalSeconds: 30, BackoffRate: 1, MaxAttempts: 40 });
      expect(retrier.JitterStrategy).toBeUndefined();
    }
  });

  it('never retries invalid input, terminal errors or everything', () => {
    for (const [name, state] of Object.entries(states)) {
      for (const retrier of state.Retry ?? []) {
        for (const error of retrier.ErrorEquals) {
          expect(error, `${name} retries ${error}`).not.toBe('States.ALL');
          expect(error, `${name} retries ${error}`).not.toBe('States.TaskFailed');
          if (error.startsWith('Agent.')) expect(RETRYABLE_ERRORS, `${name} retries ${error}`).toContain(error);
        }
      }
    }
  });

  it('records every failure after StartRun in the run before the execution fails', () => {
    // A failure inside a tool call's iteration fails the Map (and stops its other iterations): the Map's Catch records it.
    for (const name of ['CallModel', 'ToolCalls', 'RequestBudgetExtension', 'Finalize']) {
      const catchAll = states[name]!.Catch!.find((catcher) => catcher.ErrorEquals.includes('States.ALL'));
      expect(catchAll, name).toMatchObject({ Next: 'RecordFailure', ResultPath: '$.error' });
    }
    expect(states['RecordFailure']!.Next).toBe('RunFailed');
    expect(states['RunFailed']!.Type).toBe('Fail');
  });

  it('waits for approvals on a task token and routes rejections and timeouts to CallTool', () => {
    const approval = states['RequestApproval']!;
    expect(approval.Resource).toBe('arn:aws:states:::lambda:invoke.waitForTaskToken');
    expect(approval.Parameters).toMatchObject({ Payload: { 'taskToken.$': '$$.Task.Token' } });
    expect(approval.TimeoutSeconds).toBeGreaterThanOrEqual(7 * 24 * 3600);
    const escalation = approval.Catch!.find((catcher) => catcher.Next === 'CallTool');
    expect(escalation!.ErrorEquals.sort()).toEqual([ErrorNames.ApprovalExpired, ErrorNames.ApprovalRejected, 'States.Timeout'].sort());
  });

  it('asks a person to extend an exhausted budget through the same approval function, then decides again', () => {
    const extension = states['RequestBudgetExtension']!;
    expect(extension.Resource).toBe('arn:aws:states:::lambda:invoke.waitForTaskToken');
    expect(extension.Parameters).toMatchObject({ Payload: { 'taskToken.$': '$$.Task.Token', 'extension.$': '$.budget.result.extension' } });
    expect(extension.Next).toBe('CallModel');
    expect(extension.Catch!.find((catcher) => catcher.ErrorEquals.includes(ErrorNames.ApprovalRejected))!.Next).toBe('CallModel');
    // Asked first, so that a stop decision carrying an extension request never reaches Finalize.
    const rules = (states['ToolCallsOrStop'] as unknown as { Choices: { Next: string }[] }).Choices;
    expect(rules.map((rule) => rule.Next)).toEqual(['RequestBudgetExtension', 'Finalize', 'Handoff', 'Compact', 'ResumeToolCalls']);
  });

  it('sets an explicit timeout on every task', () => {
    for (const [name, state] of Object.entries(states)) {
      if (state.Type === 'Task') expect(state.TimeoutSeconds, name).toBeGreaterThan(0);
    }
  });

  it('carries pointers, not the conversation, between states', () => {
    for (const name of ['CallTool', 'RequestApproval']) {
      expect(states[name]!.Parameters, name).toMatchObject({ Payload: { 'runId.$': '$.runId', 'turn.$': '$.turn', 'call.$': '$.call' } });
    }
  });
});

describe('the functions', () => {
  it('run on the newest Node.js runtime, ARM64, with tracing', () => {
    const functions = template.findResources('AWS::Lambda::Function', { Properties: { Environment: { Variables: { SAVEPOINT_STEP: Match.anyValue() } } } });
    const steps = Object.values(functions).map((fn) => fn.Properties.Environment.Variables.SAVEPOINT_STEP);
    // Every step but the batch item, which only an agent with `batches` has (test/infra/batches.test.ts).
    expect(steps.sort()).toEqual(Object.values(Steps).filter((step) => step !== Steps.BatchItem).sort());
    for (const fn of Object.values(functions)) {
      expect(fn.Properties).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'], TracingConfig: { Mode: 'Active' } });
      // The pruner deletes versions: it has no use for the ledger, so it is not given it.
      if (fn.Properties.Environment.Variables.SAVEPOINT_STEP !== Steps.PruneVersions) expect(fn.Properties.Environment.Variables.TABLE_NAME).toBeDefined();
      else expect(fn.Properties.Environment.Variables.TABLE_NAME).toBeUndefined();
    }
  });
});

describe('the ledger table', () => {
  it('is on-demand with point-in-time recovery and a TTL attribute', () => {
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      BillingMode: 'PAY_PER_REQUEST',
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      Replicas: [Match.objectLike({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } })],
    });
  });
});

describe('the nightly schedule', () => {
  it('starts the state machine at 02:00 UTC on its alias (the newest version), with the scheduled event as input', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'cron(0 2 * * ? *)',
      Targets: [Match.objectLike({ Arn: { 'Fn::Join': ['', Match.arrayWith([':stateMachine:Savepoint-refund-reconciler:live'])] }, DeadLetterConfig: Match.anyValue() })],
    });
  });

  it('fails at synth time for a schedule expression EventBridge would refuse at deploy, naming the prop and why', () => {
    const stack = new SavepointStack(assertionApp(), 'Schedules');
    const add = (id: string, expression: string) => () => stack.addAgent(id, { agentName: id.toLowerCase(), entry: 'agent.ts', schedule: Schedule.expression(expression) });
    expect(add('Plural', 'rate(5 minute)')).toThrow('DurableAgent Plural: schedule: "rate(5 minute)" is not a schedule: EventBridge wants "5 minutes"');
    expect(add('Unix', 'cron(0 2 * * *)')).toThrow(/^DurableAgent Unix: schedule: "cron\(0 2 \* \* \*\)" is not a schedule: EventBridge's cron has 6 fields .* this has 5$/);
    expect(add('BothDays', 'cron(0 2 * * * *)')).toThrow(`DurableAgent BothDays: schedule: "cron(0 2 * * * *)" is not a schedule: EventBridge's cron wants "?" in day-of-month or day-of-week`);
    expect(add('Words', 'every day')).toThrow(/^DurableAgent Words: schedule: "every day" is not a schedule/);
    // What EventBridge takes: the CDK's own builders' expressions, and the same written out.
    for (const [id, schedule] of [['Rate', Schedule.rate(Duration.hours(1))], ['Cron', Schedule.cron({ hour: '2', minute: '0' })], ['Hour', Schedule.expression('rate(1 hour)')], ['Weekdays', Schedule.expression('cron(0 9 ? * MON-FRI *)')]] as const) {
      expect(() => stack.addAgent(id, { agentName: id.toLowerCase(), entry: 'agent.ts', schedule }), id).not.toThrow();
    }
  });

  it('fails at synth time for an agent name that cannot name a state machine', () => {
    const app = assertionApp();
    const stack = new SavepointStack(app, 'Bad');
    expect(() => stack.addAgent('Bad', { agentName: 'Refund Reconciler', entry: 'agent.ts' })).toThrow(/agentName must be the agent's name .*"Refund Reconciler"/);
  });

  it("fails at synth time, naming the stack's name and agentName, when together they make a state machine name over 80 characters", () => {
    const stack = new SavepointStack(assertionApp(), 'AcmeCustomerOperationsAgentsProductionEU');
    expect(() => stack.addAgent('Long', { agentName: 'refund-reconciler-for-the-eu-marketplace', entry: 'agent.ts' })).toThrow(
      'DurableAgent Long: the state machine\'s name "AcmeCustomerOperationsAgentsProductionEU-refund-reconciler-for-the-eu-marketplace" (the stack\'s name, "-", agentName) is 81 characters, over the 80',
    );
  });

  it("fails at synth time, before any bundle, for an entry that is no file, naming the prop and where it looked (a synth that bundles nothing reads none)", () => {
    // An app that bundles (the CDK's default), its assembly in the run's scratch directory.
    const stack = new SavepointStack(new App({ outdir: scratchDir('cdk.out-') }), 'NoEntry');
    expect(() => stack.addAgent('Missing', { agentName: 'refunds', entry: 'agents/gone/agent.ts' })).toThrow(`DurableAgent Missing: entry "agents/gone/agent.ts" is no file (${resolve('agents/gone/agent.ts')})`);
    expect(() => new SavepointStack(assertionApp(), 'Unbundled').addAgent('Missing', { agentName: 'refunds', entry: 'agents/gone/agent.ts' })).not.toThrow();
  });

  it('fails at synth time for an agent prop that is not an agent (a module namespace), and for an entry that is the dev module', () => {
    const stack = new SavepointStack(assertionApp(), 'Mistakes');
    const namespace = { default: refundReconciler, saved: new Map() };
    expect(() => stack.addAgent('Namespace', { agentName: 'refund-reconciler', agent: namespace as never, entry: 'agents/refund-reconciler/agent.ts' })).toThrow(
      'DurableAgent Namespace: agent: expected an agent made by defineAgent, got an object with default, saved (a module\'s namespace? pass its default export)',
    );
    expect(() => stack.addAgent('Path', { agentName: 'refund-reconciler', agent: './agent.js' as never, entry: 'agents/refund-reconciler/agent.ts' })).toThrow(
      'DurableAgent Path: agent: expected an agent made by defineAgent, got "./agent.js" (a module\'s namespace? pass its default export)',
    );
    expect(() => stack.addAgent('Dev', { agentName: 'refund-reconciler', entry: 'agents/refund-reconciler/agent.dev.ts' })).toThrow(
      'DurableAgent Dev: entry "agents/refund-reconciler/agent.dev.ts" is the agent\'s dev module (its simulated world and scripted model, for local runs and tests): deploy the agent\'s own module (agents/refund-reconciler/agent.ts)',
    );
  });

  it("fails at synth time for a toolTimeout or a model it cannot take, naming the agent's construct id and the prop", () => {
    const stack = new SavepointStack(assertionApp(), 'Props');
    const add = (id: string, props: object) => () => stack.addAgent(id, { agentName: id.toLowerCase(), entry: 'agent.ts', ...props });
    // NaN got only the CDK's own "NaN must be a whole number of millis."; the others named no agent ("model access: …").
    expect(add('NaN', { toolTimeout: Duration.millis(NaN) })).toThrow("DurableAgent NaN: toolTimeout must be from 1 ms to 840000 ms (a tool's longest timeoutMs), got NaN ms");
    expect(add('Long', { toolTimeout: Duration.minutes(15) })).toThrow("DurableAgent Long: toolTimeout must be from 1 ms to 840000 ms (a tool's longest timeoutMs), got 15 minutes");
    expect(add('Model', { models: { model: 'claude' } })).toThrow(/^DurableAgent Model: models\.model: invalid model spec "claude"/);
    expect(add('Other', { models: { otherModels: ['anthropic:claude-haiku-4-5', 'gpt'] } })).toThrow(/^DurableAgent Other: models\.otherModels\[1\]: invalid model spec "gpt"/);
    expect(add('Slow', { models: { timeout: Duration.seconds(900) } })).toThrow(/^DurableAgent Slow: models\.timeout must be a whole number of milliseconds from 1000 to 885000/);
  });

  it('fails at synth time for a second agent of an agentName the stack has, naming both construct ids and the prop (one whose construction failed holds no name)', () => {
    const stack = new SavepointStack(assertionApp(), 'Twice');
    expect(() => stack.addAgent('Broken', { agentName: 'a', entry: 'agent.ts', maxRecoveries: 0 })).toThrow(/^DurableAgent Broken: maxRecoveries/);
    stack.addAgent('First', { agentName: 'a', entry: 'agent.ts' });
    // This failed with "ControlPlane: agent a is served twice by the stack's API", naming neither.
    expect(() => stack.addAgent('Second', { agentName: 'a', entry: 'agent.ts', approvalApi: false })).toThrow(
      'DurableAgent Second: agentName: "a" is DurableAgent First\'s already (it names the agent\'s state machine and its runs: one agent to a name in a stack)',
    );
  });
});

describe('the kill switch', () => {
  it('marks a run killed when its execution is stopped (StopExecution), through an EventBridge rule', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { source: ['aws.states'], 'detail-type': ['Step Functions Execution Status Change'], detail: Match.objectLike({ status: ['ABORTED'] }) },
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('ExecutionStoppedFunction'), 'Arn'] } })],
    });
  });
});

describe('the approval API', () => {
  it('routes POST /approvals/{approvalId} to the ApprovalCallback function, signed with IAM', () => {
    template.hasResourceProperties('AWS::ApiGateway::Resource', { PathPart: '{approvalId}' });
    template.hasResourceProperties('AWS::ApiGateway::Method', {
      HttpMethod: 'POST',
      AuthorizationType: 'AWS_IAM',
      Integration: Match.objectLike({
        Type: 'AWS_PROXY',
        Uri: Match.objectLike({ 'Fn::Join': Match.arrayWith([Match.arrayWith([Match.objectLike({ 'Fn::GetAtt': [Match.stringLikeRegexp('ApprovalCallbackFunction'), 'Arn'] })])]) }),
      }),
    });
  });

  it('defines the methods the local API takes on each route, and no other (the loopback ports answer any other 405 naming these)', () => {
    const [api] = restApisOf(template.toJSON());
    expect([...api!.methods.keys()].sort()).toEqual([...API_METHODS].sort());
  });

  it('lets only the approval functions answer task tokens', () => {
    const holders = identityPolicies(template.toJSON().Resources)
      .filter((policy) => JSON.stringify(policy.document).includes('states:SendTaskSuccess'))
      .map((policy) => policy.id.replace(/ServiceRole.*/, ''));
    expect(holders.sort()).toEqual(['ControlPlaneExpireApprovalsFunction', 'ControlPlaneStackApiApprovalCallbackFunction', 'RefundReconcilerRequestApprovalFunction']);
  });
});

describe('outputs', () => {
  it('names the state machine, the table and the approval API', () => {
    const outputs = Object.keys(template.findOutputs('*'));
    for (const output of ['StateMachineArn', 'LedgerTableName', 'ApprovalApiUrl']) {
      expect(outputs.filter((id) => id.startsWith(`RefundReconciler${output}`))).toHaveLength(1);
    }
  });
});

describe('the definition the local engine runs', () => {
  it('is valid ASL once extracted from the template, with every Task mapped to a step', async () => {
    const { createRequire } = await import('node:module');
    const { extractStateMachine } = await import('../../local/template/asl.js');
    const aslValidator = createRequire(import.meta.url)('asl-validator') as (definition: unknown) => { isValid: boolean; errorsText(sep?: string): string };
    const extracted = extractStateMachine(template.toJSON() as never);
    const { isValid, errorsText } = aslValidator(extracted.definition);
    expect(isValid, errorsText('\n')).toBe(true);
    expect(JSON.stringify(extracted.definition)).not.toMatch(/Fn::|"Ref"/);
    expect(Object.fromEntries(Object.entries(extracted.tasks).map(([state, task]) => [state, task.step]))).toEqual({
      StartRun: Steps.StartRun,
      CallModel: Steps.CallModel,
      RequestApproval: Steps.RequestApproval,
      RequestBudgetExtension: Steps.RequestApproval,
      CallTool: Steps.CallTool,
      AwaitChildRun: Steps.CallTool,
      Finalize: Steps.Finalize,
      RecordFailure: Steps.Finalize,
      Handoff: Steps.Handoff,
      Compact: Steps.Compact,
    });
  });
});

describe('long runs', () => {
  it('hands a run near its history limit to a successor and ends with the handoff as output (continue-as-new)', () => {
    const handoff = states['Handoff']!;
    expect(handoff.Parameters).toMatchObject({ Payload: { 'runId.$': '$.run.result.runId', 'executionArn.$': '$$.Execution.Id' } });
    expect(handoff.Next).toBe('RunContinued');
    expect(states['RunContinued']).toMatchObject({ Type: 'Succeed', OutputPath: '$.handoff.result' });
    // Once handed off the run is the successor's: a failure here must not be recorded as the run's.
    expect(handoff.Catch!.map((catcher) => catcher.Next)).toEqual(['HandoffFailed']);
  });

  it('compacts the context in a step of its own, retried like a model call, then decides again', () => {
    const compact = states['Compact']!;
    expect(compact.Parameters).toMatchObject({ Payload: { 'turn.$': '$.budget.result.compact.turn', 'covers.$': '$.budget.result.compact.covers' } });
    expect(compact.Next).toBe('CallModel');
    expect(compact.Retry!.map((retrier) => retrier.ErrorEquals[0])).toEqual(states['CallModel']!.Retry!.map((retrier) => retrier.ErrorEquals[0]));
  });
});
