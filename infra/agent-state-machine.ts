import { ArnFormat, Duration, Lazy, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Function as LambdaFunction, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays, type ILogGroup } from 'aws-cdk-lib/aws-logs';
import {
  CfnStateMachine,
  CfnStateMachineAlias,
  CfnStateMachineVersion,
  Choice,
  Condition,
  DefinitionBody,
  Errors,
  Fail,
  IntegrationPattern,
  JitterType,
  type RetryProps,
  JsonPath,
  LogLevel,
  Map as MapState,
  Pass,
  StateMachine,
  StateMachineType,
  Succeed,
  TaskInput,
  Timeout,
  Wait,
  WaitTime,
} from 'aws-cdk-lib/aws-stepfunctions';
import { LambdaInvoke } from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { InlinePolicyRole } from './inline-policy-role.js';
import { ErrorNames } from '../lambdas/shared/errors.js';

/** The Lambda functions the loop runs, one per step kind. */
export interface AgentStepFunctions {
  readonly startRun: IFunction;
  readonly budgetCheck: IFunction;
  readonly callModel: IFunction;
  readonly requestApproval: IFunction;
  readonly callTool: IFunction;
  readonly finalize: IFunction;
  /** Continue-as-new: hands a run near its history limit to a successor execution. @default no handoff state */
  readonly handoff?: IFunction;
  /** Context compaction: one model call that summarises the older turns. @default no compaction state */
  readonly compact?: IFunction;
}

export interface AgentStateMachineProps {
  readonly functions: AgentStepFunctions;
  /** The state machine's name (fixed, so that grants can name it without referencing it). */
  readonly stateMachineName: string;
  /**
   * The longest an approval may wait before the task itself times out. Approvals normally expire
   * earlier, at the run's `approvalTimeoutSeconds`, through the expiry sweep; this is the backstop.
   * @default Duration.days(8)
   */
  readonly approvalBackstop?: Duration;
  /** @default Duration.days(10) */
  readonly executionTimeout?: Duration;
  /**
   * What this deploy's state machine version says about itself (≤ 256 characters), e.g. the agent
   * and its code version: the console and `DescribeStateMachine` show it next to each execution.
   * @default 'savepoint agent loop'
   */
  readonly versionDescription?: string;
  /**
   * How many tool calls of one model turn run at once (the `ToolCalls` Map's MaxConcurrency). Each
   * call is still claimed and recorded on its own, and the model gets the results in call order;
   * `1` runs them one after another. An inline Map runs at most 40 iterations at once.
   * @default 10
   */
  readonly toolConcurrency?: number;
  /**
   * Where the executions' history is logged: the stack's, shared by its agents (infra/control-plane.ts).
   * @default a log group of its own (three months, retained)
   */
  readonly executionLogs?: ILogGroup;
}

export { DEFAULT_TOOL_CONCURRENCY } from '../lambdas/shared/steps.js';
import { DEFAULT_TOOL_CONCURRENCY } from '../lambdas/shared/steps.js';

/** The alias new runs start on: it routes every new execution to the version this deploy published. */
export { LIVE_ALIAS } from '../lambdas/runs/versions.js';
import { LIVE_ALIAS } from '../lambdas/runs/versions.js';

export { definitionIdentity } from '../lambdas/shared/definition-identity.js';
import { definitionIdentity } from '../lambdas/shared/definition-identity.js';
import { INLINE_MAP_MAX_CONCURRENCY, LAMBDA_MAX_TIMEOUT_MS } from '../lambdas/shared/limits.js';

/** State names are part of the contract: tests, the local engine and the console refer to them. */
export const States = {
  StartRun: 'StartRun',
  CallModel: 'CallModel',
  RequestApproval: 'RequestApproval',
  RequestBudgetExtension: 'RequestBudgetExtension',
  CallTool: 'CallTool',
  /** An agent tool's call waits for its child run (CallTool's function with a task token; lambdas/tools/child-runs.ts). */
  AwaitChildRun: 'AwaitChildRun',
  /** The Map over one turn's tool calls: each iteration starts at CallTool. */
  ToolCalls: 'ToolCalls',
  /** Routes CallModel's decision: the turn's tool calls, or a stop, an extension, a handoff, a compaction. */
  ToolCallsOrStop: 'ToolCallsOrStop',
  /** A run resumed mid-turn: the tool calls the model asked for that have no result yet. */
  ResumeToolCalls: 'ResumeToolCalls',
  Finalize: 'Finalize',
  RecordFailure: 'RecordFailure',
  /** Reads the seconds of a provider's `retry-after` from the error (two Pass states)… */
  ReadRetryAfter: 'ReadRetryAfter',
  RetryAfterSeconds: 'RetryAfterSeconds',
  /** …and waits them out before calling the model again. */
  WaitRetryAfter: 'WaitRetryAfter',
  /** Reads the seconds a settling send has left from CallTool's `Agent.SettleWait` (two Pass states)… */
  ReadSettleWait: 'ReadSettleWait',
  SettleSeconds: 'SettleSeconds',
  /** …and waits them out before CallTool claims the call again. */
  WaitSettle: 'WaitSettle',
  Handoff: 'Handoff',
  Compact: 'Compact',
} as const;

/** Retries with exponential backoff and full jitter, on transient error names only. */
export const RETRY: Record<'transient' | 'throttled' | 'leaseHeld' | 'circuitOpen', RetryProps> = {
  transient: { errors: [ErrorNames.Transient], interval: Duration.seconds(1), maxAttempts: 6, backoffRate: 2, maxDelay: Duration.seconds(30), jitterStrategy: JitterType.FULL },
  throttled: { errors: [ErrorNames.ModelThrottled], interval: Duration.seconds(2), maxAttempts: 6, backoffRate: 2, maxDelay: Duration.seconds(60), jitterStrategy: JitterType.FULL },
  // The breaker stays open 30 s: wait that long between tries, without jitter (each try is a
  // cheap check that fails fast), for up to 20 minutes of provider outage.
  circuitOpen: { errors: [ErrorNames.CircuitOpen], interval: Duration.seconds(30), maxAttempts: 40, backoffRate: 1 },
  leaseHeld: { errors: [ErrorNames.LeaseHeld], interval: Duration.seconds(10), maxAttempts: 8, backoffRate: 1.5, maxDelay: Duration.seconds(60), jitterStrategy: JitterType.FULL },
};

/**
 * Lambda's own faults on invoke — throttling under load included — on every Task, with backoff
 * and full jitter (replaces LambdaInvoke's default retrier, which has no TooManyRequests and no
 * jitter). Safe: every step is idempotent per (run, turn, call).
 */
export const LAMBDA_SERVICE_ERRORS = [
  'Lambda.TooManyRequestsException',
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.ClientExecutionTimeoutException',
] as const;
/**
 * A Lambda Task's TimeoutSeconds over its function's timeout: a cold start's Init phase (up to
 * 10 s) is not part of the function's timeout, and the invoke itself takes a moment. A Task that
 * gives up first reports States.Timeout while the function may still be running, its answer lost.
 */
export const TASK_TIMEOUT_MARGIN = Duration.seconds(15);
/** The longest a Lambda function can run: what a Task allows a function whose timeout it cannot read. */
const LAMBDA_MAX_TIMEOUT = Duration.millis(LAMBDA_MAX_TIMEOUT_MS);

/**
 * States.Timeout on a Lambda Task: the invoke did not answer within the function's timeout and the
 * margin, so it was lost on the way (the function's own deadline ends it sooner, as an
 * `Agent.Transient`). Retried a few times like Lambda's own faults: every step is idempotent per
 * (run, turn, call). Never on an approval, where it is the backstop having passed.
 */
export const TIMEOUT_RETRY: RetryProps = { errors: [Errors.TIMEOUT], interval: Duration.seconds(5), maxAttempts: 2, backoffRate: 2, jitterStrategy: JitterType.FULL };

export const LAMBDA_RETRY: RetryProps = {
  errors: [...LAMBDA_SERVICE_ERRORS],
  interval: Duration.seconds(2),
  maxAttempts: 8,
  backoffRate: 2,
  maxDelay: Duration.seconds(60),
  jitterStrategy: JitterType.FULL,
};

/**
 * The agent loop as a Standard state machine (JSONPath only, so that the local engine runs the
 * very same definition):
 *
 *   StartRun ─► CallModel ─► ToolCalls (Map, one iteration per tool call of the turn):
 *                 ▲  │ stop       CallTool ─(needs approval)─► RequestApproval ─► CallTool
 *                 │  ▼                                                               │
 *                 │ Finalize                                                         │
 *                 └──────────────────────────────────────────────────────────────────┘
 *
 * A model turn costs three transitions (CallModel, its Choice, the Map) and one per tool call:
 * Step Functions bills each, and they are most of a run's AWS bill. So CallModel makes the
 * harness's stop decision itself (steps/budget-check.ts `check`, from the read it makes for the
 * call) before every model call: at an execution's start, after a turn's tool calls, a compaction
 * or a budget extension; and after the model's final answer, in the same invocation, so the last
 * turn goes straight to Finalize (no empty Map, no CallModel after it). Its decision goes through
 * one Choice (`routeDecision`). StartRun's result selector shapes the state the loop starts from
 * (no Pass state after it). The BudgetCheck
 * function made an execution's first decision until 0.8.0: no state invokes it now, and it stays
 * deployed for the executions still running on an older version, which do.
 *
 * The calls of a turn run concurrently (`toolConcurrency`): a call waiting for a person does not
 * hold back the others, and a failed call fails the Map (its Catch records the run's failure).
 * Execution payloads carry pointers (run id, turn, call), never the conversation.
 */
export class AgentStateMachine extends Construct {
  readonly stateMachine: StateMachine;
  /** This deploy's version of the state machine (kept after the next deploy: its executions drain on it). */
  readonly version: CfnStateMachineVersion;
  /** The alias new runs start on (`<machine>:live`), pointing at `version`. */
  readonly alias: CfnStateMachineAlias;
  /**
   * ARNs built from the fixed name, for grants that must not reference the resource: the machine,
   * its executions, and its alias (what new runs and continued ones are started on).
   */
  readonly arns: { readonly stateMachine: string; readonly executions: string; readonly alias: string };

  constructor(scope: Construct, id: string, props: AgentStateMachineProps) {
    super(scope, id);
    const fns = props.functions;
    const runId = JsonPath.stringAt('$.run.result.runId');
    const backstop = props.approvalBackstop ?? Duration.days(8);
    if (backstop.toSeconds() < 7 * 24 * 3600) {
      throw new Error(`approvalBackstop must be at least 7 days (the longest approval timeout), got ${backstop.toHumanString()}`);
    }
    const toolConcurrency = props.toolConcurrency ?? DEFAULT_TOOL_CONCURRENCY;
    if (!Number.isInteger(toolConcurrency) || toolConcurrency < 1 || toolConcurrency > INLINE_MAP_MAX_CONCURRENCY) {
      throw new Error(`DurableAgent ${scope.node.id}: toolConcurrency must be an integer from 1 to ${INLINE_MAP_MAX_CONCURRENCY} (an inline Map's most concurrent iterations), got ${toolConcurrency}`);
    }

    // Every Task invokes the function's version published by this deploy, never $LATEST: a live
    // execution keeps calling the code it started on after the next deploy (its versions are
    // retained, StepFunction's currentVersionOptions). An IFunction that is not ours is invoked as given.
    const pinned = (fn: IFunction): IFunction => (fn instanceof LambdaFunction ? fn.currentVersion : fn);
    const taskTimeout = (fn: IFunction): Duration =>
      ((fn instanceof LambdaFunction && fn.timeout) || LAMBDA_MAX_TIMEOUT).plus(TASK_TIMEOUT_MARGIN);
    const step = (name: string, fn: IFunction, payload: Record<string, unknown>, resultPath: string, resultSelector: Record<string, unknown> = { 'result.$': '$.Payload' }) => {
      const task = new LambdaInvoke(this, name, {
        stateName: name,
        lambdaFunction: pinned(fn),
        payload: TaskInput.fromObject({ executionArn: JsonPath.executionId, ...payload }), // ops: the execution on every log line
        resultSelector,
        resultPath,
        // Explicit: a Task without a timeout waits forever on AWS (and 60 s on the local engine).
        taskTimeout: Timeout.duration(taskTimeout(fn)),
        retryOnServiceExceptions: false, // ops: LAMBDA_RETRY instead
      });
      task.addRetry(LAMBDA_RETRY); // ops
      task.addRetry(TIMEOUT_RETRY);
      task.addRetry(RETRY.transient);
      return task;
    };

    const runFailed = new Fail(this, 'RunFailed', { errorPath: '$.error.Error', causePath: '$.error.Cause' });
    const notStarted = new Fail(this, 'RunNotStarted', { errorPath: '$.error.Error', causePath: '$.error.Cause' });
    const recordFailure = step(States.RecordFailure, fns.finalize, { runId, failure: JsonPath.objectAt('$.error') }, '$.final');
    recordFailure.addCatch(runFailed, { resultPath: '$.recordError' });
    recordFailure.next(runFailed);
    const catchAll = { errors: [Errors.ALL], resultPath: '$.error' };

    // What StartRun must know about this definition, carried in its own payload rather than asked
    // of DescribeStateMachineForExecution on every start (a 200-token bucket refilling 1/s per
    // account: issue 20 item 4): its identity (a hash of the definition as deployed, this field
    // left out) and the limits a run's config is checked against.
    const executionTimeout = props.executionTimeout ?? Duration.days(10);
    let hashing = false;
    let identity: string | undefined;
    const definitionHash = Lazy.uncachedString({
      produce: () => {
        if (hashing) return '';
        if (identity === undefined) {
          hashing = true;
          try {
            identity = definitionIdentity(Stack.of(this).resolve((this.stateMachine.node.defaultChild as CfnStateMachine).definitionString));
          } finally {
            hashing = false;
          }
        }
        return identity;
      },
    });
    // StartRun's result is the execution's state from here on: the run's id and what StartRun
    // decided (for StartOrResume), and where the first decision's history estimate starts (null
    // when there is nothing to do). The execution's input (the run request, its config) is
    // StartRun's alone, not carried through every later state.
    const startRun = step(
      States.StartRun,
      fns.startRun,
      {
        event: JsonPath.entirePayload,
        executionArn: JsonPath.executionId,
        definition: { hash: definitionHash, executionTimeoutSeconds: executionTimeout.toSeconds(), approvalWaitSeconds: backstop.toSeconds() },
      },
      '$',
      {
        run: { result: { 'runId.$': '$.Payload.runId', 'action.$': '$.Payload.action', 'status.$': '$.Payload.status' } },
        budget: { result: { 'history.$': '$.Payload.history' } },
      },
    );
    startRun.addCatch(notStarted, catchAll);

    // CallModel writes its decision to `$.budget`, where the Choice after it reads it and the
    // history estimate goes from each decision to the next in the execution's own state
    // (lambdas/guards/history.ts): the history is counted only when it could be near its limit.
    const decision = { runId, history: JsonPath.objectAt('$.budget.result.history') };

    // Decides, then calls the model for the turn it decided on (its result: the decision and the turn).
    const callModel = step(States.CallModel, fns.callModel, decision, '$.budget');
    callModel.addRetry(RETRY.throttled);
    callModel.addRetry(RETRY.circuitOpen);
    // A throttle with a `retry-after`: a Retry's backoff cannot read it, so the error is caught
    // and its seconds waited out. Lambda hands over only the error's name and message (inside the
    // Cause, a JSON string); the message starts with the seconds ("17 s …", shared/errors.ts), read
    // with intrinsics alone so the local engine runs the same definition. Bounded like any call:
    // each throttle counts toward the model's breaker, and CallModel decides again (the kill
    // switches, the budgets, the run's status) before every call.
    const waitRetryAfter = new Wait(this, States.WaitRetryAfter, { time: WaitTime.secondsPath('$.throttle.seconds') }).next(callModel);
    const retryAfterSeconds = new Pass(this, States.RetryAfterSeconds, {
      parameters: { 'seconds.$': "States.StringToJson(States.ArrayGetItem(States.StringSplit($.throttle.cause.errorMessage, ' '), 0))" },
      resultPath: '$.throttle',
    }).next(waitRetryAfter);
    const readRetryAfter = new Pass(this, States.ReadRetryAfter, {
      parameters: { 'cause.$': 'States.StringToJson($.throttle.Cause)' },
      resultPath: '$.throttle',
    }).next(retryAfterSeconds);
    callModel.addCatch(readRetryAfter, { errors: [ErrorNames.ModelRetryAfter], resultPath: '$.throttle' });
    callModel.addCatch(recordFailure, catchAll);

    // ---- the turn's tool calls (lambdas/conversation/tool-calls.ts) ----
    // One iteration per call CallModel planned (a pointer and its approval verdict, never the
    // arguments). Inside an iteration the state is the item; failures leave it for the Map's Catch.
    const thisCall = { runId: JsonPath.stringAt('$.runId'), turn: JsonPath.numberAt('$.turn'), call: JsonPath.numberAt('$.call') };
    // Each iteration starts at CallTool, with no Choice in front (a transition per call, billed):
    // a call that needs a person's approval throws Agent.ApprovalNeeded before it sends anything,
    // caught into RequestApproval, which goes back to CallTool with the wait's end in `$.approval`
    // (false until then: the item seeds it), where CallTool reads the recorded decision.
    // `made`: CallModel's result for the turn, which may hand the call what the turn's write left
    // (lambdas/steps/handed-step.ts): a read call then reads nothing of its own.
    const callTool = step(States.CallTool, fns.callTool, { ...thisCall, approval: JsonPath.objectAt('$.approval'), made: JsonPath.objectAt('$.made') }, '$.step');
    callTool.addRetry(RETRY.leaseHeld);
    callTool.addRetry(RETRY.circuitOpen);
    // A send of unknown outcome whose settle time is not over (protocol.ts takeoverAfter): caught
    // and waited out for exactly the seconds CallTool names ("42 s …", as a retry-after), however
    // long the tool's settleMs — a Retry's fixed attempts would run out on a long one. Bounded:
    // CallTool checks the kill switch and the wall-clock budget before every claim.
    const waitSettle = new Wait(this, States.WaitSettle, { time: WaitTime.secondsPath('$.settle.seconds') }).next(callTool);
    const settleSeconds = new Pass(this, States.SettleSeconds, {
      parameters: { 'seconds.$': "States.StringToJson(States.ArrayGetItem(States.StringSplit($.settle.cause.errorMessage, ' '), 0))" },
      resultPath: '$.settle',
    }).next(waitSettle);
    const readSettleWait = new Pass(this, States.ReadSettleWait, {
      parameters: { 'cause.$': 'States.StringToJson($.settle.Cause)' },
      resultPath: '$.settle',
    }).next(settleSeconds);
    callTool.addCatch(readSettleWait, { errors: [ErrorNames.SettleWait], resultPath: '$.settle' });

    /** A Task that invokes `fn` with the execution's task token and waits until something answers it (or `timeout` passes). */
    const tokenWait = (name: string, fn: IFunction, payload: Record<string, unknown>, resultPath: string, timeout: Duration) => {
      const task = new LambdaInvoke(this, name, {
        stateName: name,
        lambdaFunction: pinned(fn),
        integrationPattern: IntegrationPattern.WAIT_FOR_TASK_TOKEN,
        payload: TaskInput.fromObject({ executionArn: JsonPath.executionId, ...payload, taskToken: JsonPath.taskToken }),
        resultPath,
        taskTimeout: Timeout.duration(timeout),
        retryOnServiceExceptions: false, // ops: LAMBDA_RETRY instead
      });
      task.addRetry(LAMBDA_RETRY); // ops
      task.addRetry(RETRY.transient);
      return task;
    };

    /**
     * Waits on a task token for a person's decision; whatever it is — approved, rejected, expired,
     * or the backstop timeout — the run goes on to `then`, which reads the recorded decision.
     * Any other failure goes to `failed` (none inside a Map iteration: the Map's Catch has it).
     */
    const awaitDecision = (name: string, payload: Record<string, unknown>, then: LambdaInvoke, failed?: LambdaInvoke) => {
      const task = tokenWait(name, fns.requestApproval, payload, '$.approval', backstop);
      task.addCatch(then, { errors: [ErrorNames.ApprovalRejected, ErrorNames.ApprovalExpired, Errors.TIMEOUT], resultPath: '$.approval' });
      if (failed) task.addCatch(failed, catchAll);
      return task.next(then);
    };

    // A rejected or expired approval is not a failure of the run: CallTool records it as the
    // tool's result and the agent flags the refund for review.
    const requestApproval = awaitDecision(States.RequestApproval, thisCall, callTool);
    callTool.addCatch(requestApproval, { errors: [ErrorNames.ApprovalNeeded], resultPath: '$.approval' });

    // An agent tool's call (defineAgentTool): CallTool throws Agent.ChildRunPending while its child
    // run is not over; caught into this wait, where the same function — given the task token —
    // starts the child once (the child's run id derives from the call) and stores the token, which
    // the child's end wakes (ExecutionStopped hears it). No polling: the execution waits on the
    // token, then CallTool records the child's result. Bounded by the execution's own timeout.
    const awaitChildRun = tokenWait(States.AwaitChildRun, fns.callTool, thisCall, '$.child', executionTimeout).next(callTool);
    callTool.addCatch(awaitChildRun, { errors: [ErrorNames.ChildRunPending], resultPath: '$.child' });
    const toolCalls = new MapState(this, States.ToolCalls, {
      itemsPath: '$.budget.result.calls',
      // `made`: the whole of CallModel's result (always there, unlike its `handed`, which a path that
      // does not exist would fail on: a resumed turn's decision hands nothing).
      itemSelector: { runId, 'turn.$': '$$.Map.Item.Value.turn', 'call.$': '$$.Map.Item.Value.call', approval: false, 'made.$': '$.budget.result' },
      maxConcurrency: toolConcurrency,
      // The results are in the ledger (the model reads them from there, in call order): the
      // execution's state keeps none of them.
      resultPath: JsonPath.DISCARD,
    });
    toolCalls.itemProcessor(callTool);
    toolCalls.addCatch(recordFailure, catchAll);
    // CallModel decides before it calls: no state between the turns.
    toolCalls.next(callModel);

    const finalize = step(States.Finalize, fns.finalize, { runId, stop: JsonPath.objectAt('$.budget.result') }, '$.final');
    finalize.addCatch(recordFailure, catchAll);
    finalize.next(new Succeed(this, 'RunFinished', { outputPath: '$.final.result' }));

    // An exhausted budget of a run configured to ask: a person extends it or not, through the same
    // approval flow as refunds; either way CallModel decides again from the recorded decision
    // (and calls the model if the run goes on).
    const requestBudgetExtension = awaitDecision(
      States.RequestBudgetExtension,
      { runId, extension: JsonPath.objectAt('$.budget.result.extension') },
      callModel,
      recordFailure,
    );

    // A run resumed mid-turn first finishes the tool calls the model already asked for.
    const resumeToolCalls = new Pass(this, States.ResumeToolCalls, {
      inputPath: '$.budget.result.pending',
      resultPath: '$.budget.result.calls',
    }).next(toolCalls);

    // ---- continue-as-new (lambdas/steps/handoff.ts) ----
    // Near the history limit, the run is handed to a successor execution and this one ends. Its
    // failures go straight to Fail, not RecordFailure: once handed off, the run is the successor's.
    let handoff: LambdaInvoke | undefined;
    if (fns.handoff) {
      handoff = step(
        States.Handoff,
        fns.handoff,
        // The context object's state machine: the successor starts on the execution's own version
        // when it names one, with no DescribeExecution (lambdas/steps/handoff.ts).
        { runId, executionArn: JsonPath.executionId, stateMachine: JsonPath.stringAt('$$.StateMachine.Id'), events: JsonPath.numberAt('$.budget.result.handoff.events') },
        '$.handoff',
      );
      handoff.addCatch(new Fail(this, 'HandoffFailed', { errorPath: '$.error.Error', causePath: '$.error.Cause' }), catchAll);
      handoff.next(new Succeed(this, 'RunContinued', { outputPath: '$.handoff.result', comment: 'The run continues in a successor execution.' }));
    }

    // ---- context compaction (lambdas/steps/compaction.ts) ----
    // A model call like CallModel's (same retries, same Catch), then CallModel decides again.
    let compact: LambdaInvoke | undefined;
    if (fns.compact) {
      compact = step(
        States.Compact,
        fns.compact,
        { runId, turn: JsonPath.numberAt('$.budget.result.compact.turn'), covers: JsonPath.numberAt('$.budget.result.compact.covers') },
        '$.compaction',
      );
      compact.addRetry(RETRY.throttled);
      compact.addRetry(RETRY.circuitOpen);
      compact.addCatch(recordFailure, catchAll);
      compact.next(callModel);
    }

    /**
     * Where CallModel's decision (`$.budget.result`, lambdas/steps/budget-check.ts BudgetDecision)
     * sends the run, its rules tried in order; a decision to go on, which made the turn, goes to
     * its tool calls. (`pending` exists only when the run continues; Not(IsNull) rather than
     * IsNull: false, which the local engine's interpreter gets wrong.)
     */
    const routeDecision = new Choice(this, States.ToolCallsOrStop, { comment: "CallModel decided and called the model: the turn's tool calls next, or the run's end after its final answer; or it decided on a stop, a wait, a compaction, a handoff, and called nothing." })
      .when(Condition.isPresent('$.budget.result.extension'), requestBudgetExtension)
      .when(Condition.booleanEquals('$.budget.result.continue', false), finalize);
    if (handoff) routeDecision.when(Condition.isPresent('$.budget.result.handoff'), handoff);
    if (compact) routeDecision.when(Condition.isPresent('$.budget.result.compact'), compact);
    callModel.next(routeDecision.when(Condition.not(Condition.isNull('$.budget.result.pending')), resumeToolCalls).otherwise(toolCalls));

    const definition = startRun.next(
      new Choice(this, 'StartOrResume')
        .when(Condition.or(Condition.stringEquals('$.run.result.action', 'start'), Condition.stringEquals('$.run.result.action', 'resume')), callModel)
        .otherwise(new Succeed(this, 'NothingToDo', { comment: 'The run is finished, or driven by another live execution.' })),
    );

    const stack = Stack.of(this);
    const { stateMachineName } = props;
    this.arns = {
      stateMachine: stack.formatArn({ service: 'states', resource: 'stateMachine', resourceName: stateMachineName, arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
      executions: stack.formatArn({ service: 'states', resource: 'execution', resourceName: `${stateMachineName}:*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
      alias: stack.formatArn({ service: 'states', resource: 'stateMachine', resourceName: `${stateMachineName}:${LIVE_ALIAS}`, arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
    };
    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineName,
      // Its statements inline in the role: one resource, not two (infra/inline-policy-role.ts).
      role: new InlinePolicyRole(this, 'StateMachineRole', { assumedBy: new ServicePrincipal('states.amazonaws.com') }),
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromChainable(definition),
      timeout: executionTimeout,
      tracingEnabled: true,
      logs: {
        destination: props.executionLogs ?? new LogGroup(this, 'ExecutionLogs', { retention: RetentionDays.THREE_MONTHS, removalPolicy: RemovalPolicy.RETAIN }),
        level: LogLevel.ALL,
        includeExecutionData: false,
      },
    });

    // An execution pinned to an older state machine version invokes that deploy's Lambda versions,
    // but the role has one policy, which every deploy rewrites to name its own versions. So the
    // role may invoke every version of its step functions (`function:NAME:*`, qualified ARNs
    // only: never $LATEST unqualified), and a deploy never cuts a live execution off its code.
    const invoked = new Set(Object.values(fns).filter((fn): fn is LambdaFunction => fn instanceof LambdaFunction));
    this.stateMachine.addToRolePolicy(new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [...invoked].map((fn) => `${fn.functionArn}:*`) }));

    // ---- versions (lambdas/steps/versions.ts) ----
    // Each deploy that changes the definition (a new Lambda version changes the Tasks' ARNs)
    // publishes a state machine version; the old one is retained, not deleted, so that its live
    // executions — a run parked seven days on an approval — finish on the code they started on.
    this.version = new CfnStateMachineVersion(this, 'Version', {
      stateMachineArn: this.stateMachine.stateMachineArn,
      stateMachineRevisionId: this.stateMachine.stateMachineRevisionId,
      description: (props.versionDescription ?? 'savepoint agent loop').slice(0, 256),
    });
    this.version.applyRemovalPolicy(RemovalPolicy.RETAIN);
    // New runs start on the alias, which routes all of them to the newest version.
    this.alias = new CfnStateMachineAlias(this, 'Alias', {
      name: LIVE_ALIAS,
      description: 'New runs start here: every execution on the version the latest deploy published.',
      routingConfiguration: [{ stateMachineVersionArn: this.version.attrArn, weight: 100 }],
    });
  }
}
