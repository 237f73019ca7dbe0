import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { join } from 'node:path';
import { SFNClient } from '@aws-sdk/client-sfn';
import { mkdirSync } from 'node:fs';
import { stackApprovalApiHandler } from '../../lambdas/adapters/approval-http.js';
import { runsRoutesHandler } from '../../lambdas/adapters/runs-http.js';
import { createStackRunsRoutes } from '../../lambdas/runs/stack-routes.js';
import type { ApprovalDeps } from '../../lambdas/approvals/decision.js';
import type { RunsApiDeps } from '../../lambdas/runs/runs-api.js';
import { sfnExecutions, sfnStarter, sfnTaskCallbacks, sfnVersions } from '../../lambdas/adapters/sfn.js';
import { createPruneVersions, type PruneResult } from '../../lambdas/steps/prune-versions.js';
import { createPruneFunctionVersions, remainingPins, type FunctionPruneResult } from '../../lambdas/steps/prune-function-versions.js';
import { lambdaFunctionVersions } from '../../lambdas/adapters/lambda-versions.js';
import type { AgentDefinition, DevWorld } from '../../lambdas/define.js';
import type { ApprovalRecord } from '../../lambdas/records/ledger-records.js';
import { signedLinks } from '../../lambdas/approvals/decision.js';
import { systemClock } from '../../lambdas/shared/ports.js';
import { Steps, type StepName } from '../../lambdas/shared/steps.js';
import { createRecoverRun } from '../../lambdas/steps/recover-run.js';
import { codeFingerprint } from '../../lambdas/runs/versions.js';
import { deploymentPrices } from '../../lambdas/models/prices.js';
import { sinkFromEnv } from '../../lambdas/telemetry/config.js';
import { tracingLedger } from '../../lambdas/telemetry/tracing-ledger.js';
import { startModelServer } from '../../sim/model-server.js';
import { startApprovalApi } from '../services/approval-api.js';
import { localRunEvents } from '../services/run-events.js';
import { runEventsFunctionOf, servedAsApiGatewayStreams, streamedResponseLimits } from '../aws/api-gateway-streaming.js';
import { awsStreamLimits } from '../../lambdas/runs/stream-limits.js';
import { agentStateMachineOf, extractStateMachine, type CfnTemplateJson } from '../template/asl.js';
import { localAwsConfig } from '../services/aws-config.js';
import { LEDGER_PATHS, LEDGER_TABLE, type LedgerKind } from '../state/ledger-files.js';
import { deadlineTimers, localApprovalPolicy, localApprovalSetup, templatePeople } from './approvals.js';
import { localHandlers } from './handlers.js';
import { openLocalLedger } from './ledger.js';
import { checkLostAnswers } from '../aws/dynamodb-lost-answers.js';
import { recordedRuns } from './recorded-runs.js';
import type { LocalStackOptions } from './options.js';
import { assertToolsFitTemplate, bindTasks, localEngine, type LocalHandlers } from './tasks.js';
import { startWorld } from './world.js';
import { twinIam } from '../aws/iam/index.js';
import { LambdaConcurrency, reservedConcurrency } from '../aws/lambda-concurrency.js';
import { roleClients } from './sfn-clients.js';
import { dynamoGuard, ledgerAs, ledgerTableArn } from '../aws/iam/dynamodb.js';
import { approvalsAs, lambdaClientAs, toolSecretsAs } from '../aws/iam/services.js';
import { localApiAuthorizer } from '../aws/iam/api-gateway.js';
import { LocalEventBus, matchesEventPattern, statusChangeRules } from '../aws/event-bus.js';
import { itemSizeGuard } from '../aws/dynamodb-item-size.js';
import { startSfnEndpoint } from '../services/step-functions.js';
import { SfnQuotas } from '../aws/sfn-api-throttling.js';
import { routeStatusChanges, settleStatusChanges } from '../services/status-events.js';
import { eventDeliveries } from '../aws/event-delivery.js';
import { cachedTemplate, validatedToolSchemas } from '../template/cache.js';
import { assertDeployable } from '../aws/cloudformation-template.js';
import { recoverOrphans } from './watchdog.js';
import { localBatches } from './batches.js';
import { batchTemplate } from '../template/batch.js';
import { startS3 } from '../services/s3.js';
import { createBatchItem } from '../../lambdas/runs/batch.js';
import { createRunsRoutes } from '../../lambdas/runs/runs-api.js';

/** A local batch's runs are short: each item reads its run every second (30 s on AWS: lambdas/runs/batch.ts). */
const LOCAL_BATCH_POLL_SECONDS = 1;
import { templateAliases, versionDescription } from '../aws/state-machine-versions.js';
import { ledgerFacts } from './world-facts.js';
import { startChildStacks, type ChildStacks } from './children.js';
import { childAgents, localToolTimeoutMs } from '../template/synthesize.js';
import { assertRunsLocally } from './agents.js';

export { LEDGER_PATHS, LEDGER_TABLE, type LedgerKind };
export type { LocalStackOptions };

export type LocalStack<World extends DevWorld = DevWorld> = Awaited<ReturnType<typeof startLocalStack<World>>>;

/**
 * Everything savepoint needs, on this machine: DynamoDB (dynalite), the simulated model and
 * payments provider as HTTP services, the synthesized state machine on the in-process engine with
 * its Step Functions API on loopback, the approval API, and the approval expiry sweep. The steps
 * are the same step functions inside the same middy handlers as on AWS; only their clients point
 * at loopback.
 */
/** The ledger table's ARN in the current deployment, computed again only when a deploy changed the physical names. */
function tableArnOf(template: CfnTemplateJson, iam: { readonly physical: Parameters<typeof ledgerTableArn>[1] }, first: string): () => string {
  let known = { physical: iam.physical, arn: first };
  return () => {
    if (known.physical !== iam.physical) known = { physical: iam.physical, arn: ledgerTableArn(template, iam.physical) ?? first };
    return known.arn;
  };
}

export async function startLocalStack<World extends DevWorld = DevWorld>(options: LocalStackOptions<World>) {
  const { agent } = options;
  const clock = options.clock ?? systemClock;
  // Checked before anything starts: a bad value names the option, and nothing is left running.
  const deliveries = eventDeliveries(options.statusChangeDeliveries);
  if (options.dynamoDbLostAnswers) {
    checkLostAnswers(options.dynamoDbLostAnswers);
    if ((options.ledger ?? 'embedded') !== 'dynalite' || options.sharedLedger) throw new RangeError("dynamoDbLostAnswers needs ledger: 'dynalite' and a ledger of the stack's own (the embedded ledger has no DynamoDB answer to lose)");
  }
  const closers: (() => Promise<void> | void)[] = [];
  let closed: Promise<void> | undefined;
  const close = () =>
    (closed ??= (async () => {
      for (const closeOne of closers.reverse()) await closeOne();
    })());
  assertRunsLocally(agent, { ...(options.modelUrl && { modelUrl: options.modelUrl }) });
  try {
    if (options.stateDir) mkdirSync(options.stateDir, { recursive: true });
    const sink = options.tracing === undefined ? sinkFromEnv(process.env, { redact: agent.redactTrace }) : options.tracing || undefined;
    // Synthesized once per change of the stack's sources, then read from the cache (local/template/cache.ts).
    // With tracing on, it is the stack of a traced deployment (the `tracing` prop): a run's end reads its
    // conversation back through the grant that deployment carries (`traceRunEnd`), as on AWS.
    // Its CallTool function outlasts the agent's tools, as the agent's deployer makes it on AWS (`toolTimeout`).
    const toolTimeoutMs = localToolTimeoutMs(agent);
    // The people's IAM principals, when the local API plays any: the approval API's resource policy names them, as a deployment's would.
    const people = templatePeople(localApprovalPolicy(options));
    const children = childAgents(agent);
    const template = options.template ?? ((await cachedTemplate(agent.name, { traced: sink !== undefined, ...(toolTimeoutMs !== undefined && { toolTimeoutMs }), ...(people && { people }), ...(children && { children }), onNote: options.log })) as CfnTemplateJson);
    // Deployed as CloudFormation would deploy it, or refused as it would refuse it (its quotas);
    // an agent whose tools outlast its functions fails as their cold starts fail on AWS.
    assertDeployable(template);
    // The agent's own state machine: the template's one, or in a stack of several agents the one it names for this agent.
    const machine = agentStateMachineOf(template.Resources ?? {}, agent.name);
    assertToolsFitTemplate(agent, template, machine);
    const opened = options.sharedLedger ? { ledger: options.sharedLedger, endpoint: {} } : await openLocalLedger({ kind: options.ledger ?? 'embedded', stateDir: options.stateDir, template, sealer: options.sealer, memory: options.ledgerMemory, fsync: options.durability === 'sync', lostAnswers: options.dynamoDbLostAnswers }, closers);
    if (sink) closers.push(() => sink.shutdown());
    // Tracing wraps the ledger first (lambdas/telemetry/): the spans of the records as written.
    const traced = sink ? tracingLedger(opened.ledger, { sink, clock, tools: agent.tools, onError: (error) => options.log?.(`span export failed: ${String(error)}`) }) : opened.ledger;
    // Outermost: the run event stream hears of each record as every writer in this process makes it.
    const recorded = recordedRuns(options.decorateLedger ? options.decorateLedger(traced) : traced);
    const ledger = recorded.ledger;

    const model = await startModelServer({
      policy: agent.dev?.policy ?? (() => ({ content: [], stop_reason: 'end_turn' })),
      faults: { failRate: options.failRate ?? 0, seed: options.seed ?? 1 },
      // The agent's tool schemas, checked by the simulated provider once across processes (each engine paid ~45 ms for it).
      knownSchemas: validatedToolSchemas(),
    });
    closers.push(model.close);
    // The world checks its records against what the ledger remembers doing (a deleted journal is reported).
    const world = options.world ?? (await startWorld(agent, options, clock, options.stateDir ? await ledgerFacts(opened.ledger) : undefined));
    if (!options.world) closers.push(() => world.close());

    // Task states call the handlers, bound below once the engine's API endpoint is listening.
    let handlers: LocalHandlers;
    let closing = false;
    // No polling: each pending approval arms one timer at its deadline, which runs ExpireApprovals.
    const expireApprovals = () => handlers[Steps.ExpireApprovals]({}, 30_000) as Promise<{ expired: string[]; redelivered: string[] }>;
    const expireDue = () => {
      if (closing) return;
      // What failed (an expiry recorded, its delivery not) is swept again a minute later, as on AWS.
      expireApprovals().catch((error: unknown) => {
        options.log?.(`approval expiry failed: ${String(error)}`);
        deadlines.retry();
      });
    };
    const deadlines = deadlineTimers(clock, expireDue);
    closers.push(() => deadlines.clear());
    // The twin's IAM (local/aws/iam): the template's roles, each function's own credentials, the deployment's ARNs.
    const iam = options.iam === false ? undefined : twinIam(template, { stateDir: options.stateDir, agentMachine: machine, ...(options.sharedIam && { shared: options.sharedIam }) });
    const extracted = extractStateMachine(template, { stateMachineLogicalId: machine, ...(iam && { physical: iam.physical }) });
    // Every ledger call a function makes is authorized as its role, at the storage layer (local/aws/iam/dynamodb.ts),
    // and the embedded engine refuses an item DynamoDB would refuse (dynalite does so itself: local/aws/dynamodb-item-size.ts).
    const tableArn = iam && ledgerTableArn(template, iam.physical);
    const guards = [
      ...((options.ledger ?? 'embedded') === 'embedded' ? [itemSizeGuard()] : []),
      ...(iam && tableArn ? [dynamoGuard(tableArnOf(template, iam, tableArn), iam)] : []),
    ];
    // A child's stack shares its parent's ledger, and the guard the parent's stack put on it.
    if (guards.length > 0 && !options.sharedLedger) opened.ledger.guardStorage((call) => guards.forEach((guard) => guard(call)));
    // One view per function, with or without IAM: its calls carry its step, and what it caches of
    // the ledger (lambdas/conversation/turns.ts) is its own, as each Lambda function's is on AWS.
    const views = new Map<StepName, typeof ledger>();
    const ledgerOf = (step: StepName) => {
      let view = views.get(step);
      if (!view) views.set(step, (view = ledgerAs(step, ledger, iam)));
      return view;
    };
    const leaseMs = options.leaseMs ?? 1_000;
    // Version 1 keeps the handlers it started with, whatever is deployed after it.
    let firstHandlers: LocalHandlers;
    const aliases = templateAliases(template, machine);
    // Lambda's concurrency (local/aws/lambda-concurrency.ts): the account's quota and the template's reservations.
    const concurrency = new LambdaConcurrency(options.lambdaConcurrency);
    concurrency.reserve(reservedConcurrency(template));
    const engine = localEngine(extracted, () => firstHandlers, clock, { ...options, leaseMs }, { template, ...(iam && { iam: iam.engine }), aliases, concurrency });
    // Shutting down drains like Lambda: the engine stops first (no new invocations), then the
    // invocations in flight finish (against the still-open ledger) before the ledger closes.
    const inFlight = new Set<Promise<unknown>>();
    closers.push(async () => {
      await Promise.allSettled([...inFlight]);
    });
    closers.push(async () => {
      closing = true;
      await engine.close();
    });
    // The handlers reach the engine through its Step Functions API on loopback, with the real SDK.
    const quotas = options.quotas ? new SfnQuotas(() => clock.now().getTime()) : undefined;
    const endpoint = await startSfnEndpoint(engine, { ...(iam && { iam: { authorizer: iam.authorizer, credentials: iam.credentials } }), ...(quotas && { quotas }) });
    closers.push(endpoint.close);

    // In process: the real SDK (serialize, sign, parse) without a loopback round trip per call.
    // `sfn` is the operator's client (the CLI's administrator); each function signs as its own role.
    const sfn = new SFNClient({ ...localAwsConfig, endpoint: endpoint.url, requestHandler: endpoint.requestHandler });
    closers.push(() => sfn.destroy());
    const clients = roleClients(iam, sfn, endpoint);
    closers.push(clients.close);
    const sfnAs = clients.of;
    const callbacks = sfnTaskCallbacks(sfnAs(Steps.ApprovalCallback));
    // The functions start runs where they do on AWS (their STATE_MACHINE_ARN): on the alias, when the template has one.
    const startArn = aliases[0] === undefined ? extracted.stateMachineArn : `${extracted.stateMachineArn}:${aliases[0]}`;
    // The watchdog stands in for the sweeper: it resumes orphans as the sweeper's role would.
    const recoverDeps = { ledger: ledgerOf(Steps.Sweep), starter: sfnStarter(sfnAs(Steps.Sweep), startArn), clock, policy: options.recovery || undefined };

    let pageUrl = '';
    const approvalSetup = localApprovalSetup(options, () => pageUrl);
    // Each function's calls to Secrets Manager, KMS, EventBridge and SNS, authorized as its role (local/aws/iam/services.ts).
    // The account's default bus, where RequestApproval's events go (local/aws/event-bus.ts).
    const eventBus = new LocalEventBus();
    const approvalsOf = (step: StepName) => (iam ? approvalsAs(step, approvalSetup, iam, eventBus) : approvalSetup);

    const wiring = {
      options, ledger, ledgerOf, clock, model, world, sfn, sfnAs, engine, leaseMs, inFlight,
      stateMachineArn: startArn,
      ...(iam && { iam }),
      ...(quotas && { quotas }),
      approvals: approvalSetup,
      approvalsOf,
      toolSecretsOf: (step: StepName) => toolSecretsAs(step, options.toolSecrets ?? {}, clock, iam),
      armDeadline: deadlines.arm,
      closing: () => closing,
    };
    // The agents this one runs as tools, each a stack of its own on this ledger (local/runtime/children.ts).
    // Typed here: the parent's stack type would otherwise depend on itself (startStack is this function).
    const childStacks: ChildStacks = await startChildStacks(agent, options, { ledger: opened.ledger, clock, ...(iam && { iam }), startStack: (child) => startLocalStack(child) }, (stack) => {
      // A child's execution ending wakes its parent's wait: the rule DurableAgent's `children` adds, to this agent's ExecutionStopped.
      routeStatusChanges(stack.engine, ['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'], (event) => (closing ? Promise.resolve() : handlers[Steps.ExecutionStopped](event, 30_000)), options.log ?? (() => undefined), deliveries);
    });
    closers.push(childStacks.close);
    const handlersFor = (agent: AgentDefinition<any, any, World>, codeVersion: string) => localHandlers(agent, codeVersion, { ...wiring, ...(childStacks.as && { childrenAs: childStacks.as }) });
    const codeVersion = options.codeVersion ?? 'dev';
    handlers = firstHandlers = handlersFor(agent, codeVersion);

    // What EventBridge does on AWS with the template's rules on "Execution Status Change" (the
    // stack's, infra/recovery.ts), matched by their patterns (local/aws/event-bus.ts): an execution
    // stopped by StopExecution marks its run killed (ExecutionStopped); a failed or timed-out one
    // is resumed (RecoverRun). A closing engine reports nothing: the process is going away.
    const target = (step: StepName) => (event: unknown) => (closing ? Promise.resolve() : handlers[step](event, 30_000));
    const log = options.log ?? (() => undefined);
    const heard: StepName[] = options.recovery === false ? [Steps.ExecutionStopped] : [Steps.ExecutionStopped, Steps.RecoverRun];
    const rules = statusChangeRules(template, iam?.physical);
    routeStatusChanges(engine, ['ABORTED', 'FAILED', 'TIMED_OUT'], async (event) => {
      const steps = rules.filter((rule) => matchesEventPattern(rule.pattern, event)).flatMap((rule) => rule.steps.filter((step): step is StepName => heard.includes(step as StepName)));
      for (const step of steps) await target(step)(event);
    }, log, deliveries);
    closers.push(() => settleStatusChanges(engine)); // before the engine closes: a stop just made is recorded

    // The runs API as on AWS (POST /runs: the caller is who the transport proved, signed for StartRun (lambdas/runs/starter.ts);
    // it starts as RunsApi's role, on the alias.
    const runsStarter = sfnAs(Steps.RunsApi);
    // The local setup always has a starter key (keys/starters.key): approvalsOf only wraps it in RunsApi's IAM.
    const runsDeps: RunsApiDeps = { agent, starterMac: approvalsOf(Steps.RunsApi).starterMac!, runs: ledgerOf(Steps.RunsApi), ledger: ledgerOf(Steps.RunsApi), stop: sfnExecutions(runsStarter).stop, ...(childStacks.as && { children: childStacks.as(Steps.RunsApi) }), stateMachineArn: startArn, start: (arn: string, name: string, input: string) => sfnStarter(runsStarter, arn).start(name, input), clock, prices: deploymentPrices(agent.prices, options.prices), ...(options.maxBudgets && { maxBudgets: options.maxBudgets }), people: approvalSetup.policy, recorded };
    // Batches (local/runtime/batches.ts): the batch state machine's definition on an engine of its own,
    // each item's run started through the runs API's own start path, as the runs API's role.
    // The twin's S3 (local/services/s3.ts), where a batch's manifest is read from: under the state directory, each call decided as its signer's role.
    // A key of this stack's roles (the runs function's, reading a manifest) is decided by this stack's IAM; the batch role's and the administrator's by the batches'.
    const s3Dir = options.s3Dir ?? (options.stateDir && join(options.stateDir, 's3'));
    const s3 = await startS3({
      ...(s3Dir && { dir: s3Dir }),
      authorize: (authorization, request) => {
        const caller = iam?.credentials.callerOf(authorization);
        if (caller && !('administrator' in caller)) iam!.authorizer.authorize(caller, request);
        else batches.authorizeS3(authorization, request);
      },
    });
    closers.push(s3.close);
    const batches = localBatches({
      agent: agent.name,
      template: batchTemplate,
      s3,
      item: createBatchItem({ startRun: createRunsRoutes(runsDeps).start, runs: ledgerOf(Steps.RunsApi) }),
      ...(options.stateDir && { stateDir: options.stateDir }),
      now: () => clock.now(),
      ...(options.batchPollWaitMs !== undefined && { pollWaitMs: options.batchPollWaitMs }),
      ...(options.retryDelayMs !== undefined && { retryDelayMs: options.retryDelayMs }),
      log,
    });
    closers.push(() => batches.close());
    // The stack's API handlers, as on AWS (lambdas/adapters/stack-api.ts): this stack's agent is the one they serve.
    // The runs function lists a manifest batch's runs by reading its manifest, signed as its role (the template grants it the twin's manifest bucket).
    const readManifest = s3.objectReader(iam?.credentialsOf(Steps.RunsApi));
    const servedRuns: RunsApiDeps = { ...runsDeps, batches: { store: batches.store, itemFunction: batches.itemFunction, readManifest }, batchPollSeconds: LOCAL_BATCH_POLL_SECONDS };
    const runsApi = runsRoutesHandler(createStackRunsRoutes(new Map([[agent.name, servedRuns]]), ledgerOf(Steps.RunsApi)));
    const approvalDeps: ApprovalDeps = { ledger: ledgerOf(Steps.ApprovalCallback), callbacks, clock, ...approvalsOf(Steps.ApprovalCallback) };
    const apiHandler = stackApprovalApiHandler(new Map([[agent.name, approvalDeps]]), approvalDeps.ledger);
    // A decision whose delivery failed after its write is owed to the run (ApprovalRecord
    // `undelivered`): on AWS the sweep, every minute, delivers it; here a failed request arms the next sweep.
    const approvalHandler = async (event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> => {
      const response = await apiHandler(event, context);
      if (response.statusCode >= 500) deadlines.retry();
      return response;
    };
    // A caller playing an IAM principal meets the template's resource policy first, as on AWS (local/aws/iam/api-gateway.ts).
    const authorize = iam ? localApiAuthorizer(template) : undefined;
    // GET /v1/runs/{id}/events as AWS serves it (local/aws/api-gateway-streaming.ts): the RunEvents
    // function, reading the ledger as its role, keeping the limits it keeps there, behind API
    // Gateway's response streaming and the limits it cuts a stream at. A template without the
    // function (no approval API) has no such route on AWS: the engine's own stream stays.
    const twinRunEvents = () => {
      if (!runEventsFunctionOf(template)) return localRunEvents(ledger, clock, { log, recorded });
      const streamed = streamedResponseLimits(template);
      // The engine's writes wake its poller (a delivery sooner); on AWS the function only polls.
      const route = localRunEvents(ledgerOf(Steps.RunEvents), clock, { log, recorded, limits: awsStreamLimits(streamed.functionTimeoutMs) });
      return servedAsApiGatewayStreams(route, clock, streamed, (limit) => log(`run events: API Gateway cut a stream at its ${limit}`));
    };
    const runEvents = twinRunEvents();
    const approvalApi = await startApprovalApi(approvalHandler, { runs: runsApi, runEvents, ...(options.api?.port !== undefined && { port: options.api.port }), ...(options.api?.fallback && { fallback: options.api.fallback }), ...(options.approvals?.principal && { user: options.approvals.principal }), ...(authorize && { authorize }) });
    closers.push(approvalApi.close);
    pageUrl = options.api?.pageUrl ?? approvalApi.pageUrl;

    // The approvals an earlier process left pending expire on time too, and its expiries not delivered are delivered.
    for (const approval of await ledger.listPendingApprovals({ undelivered: true })) {
      if (approval.status === 'pending') deadlines.arm(approval);
      else deadlines.retry();
    }

    return {
      agent,
      engine,
      ledger,
      sfn,
      world,
      model,
      stateMachineArn: extracted.stateMachineArn,
      /** The twin's IAM (local/aws/iam): the roles, their credentials and the decisions so far; undefined with `iam: false`. */
      iam,
      /** The account's default event bus: what a rule on it receives (local/aws/event-bus.ts); filled with the twin's IAM on. */
      eventBus,
      /** Lambda's concurrency as the twin counts it (local/aws/lambda-concurrency.ts): the quota and the throttles so far. */
      lambdaConcurrency: concurrency,
      /** The API throttling (local/aws/sfn-api-throttling.ts) and what it refused; undefined unless `quotas: true`. */
      quotas,
      /** The stacks of the agent's child agents (`defineAgentTool`), by agent name, each with its own: their engines and Step Functions clients. */
      children: childStacks.stacks,
      /** Stops the child runs' executions as the runs API's role does (a killed parent's children): what the console's kill uses. Absent without child agents. */
      childRuns: childStacks.as?.(Steps.RunsApi),
      ledgerKind: options.ledger ?? 'embedded',
      /** What the twin's DynamoDB did with `dynamoDbLostAnswers` (local/aws/dynamodb-lost-answers.ts): requests, commits, answers lost, retries. */
      dynamoDbLostAnswers: 'lostAnswers' in opened ? opened.lostAnswers : undefined,
      endpoints: { ...opened.endpoint, sfn: endpoint.url, approvals: approvalApi.url, runs: approvalApi.runsUrl, approvalPage: pageUrl, model: model.url, s3: s3.endpoint, ...world.endpoints },
      /** The fingerprint of the code this stack starts runs on, for a run's model (what StartRun binds a run to). */
      fingerprintOf: codeFingerprint(agent, codeVersion, deploymentPrices(agent.prices, options.prices)),
      /**
       * The runs API's handler (`POST /runs`, served at `endpoints.runs` as this machine's user): a
       * test that plays several people invokes it with an event whose caller is one of them, as
       * API Gateway would after verifying that person's signature.
       */
      runsApi,
      /** The approval API's handler (served at `endpoints.approvals` as this machine's user), for a test that plays several people, as `runsApi`. */
      approvalApi: approvalHandler,
      /**
       * What this stack's agent is served with by the stack's API (its runs routes' and approval
       * callback's deps, as its functions' roles): several local stacks on one ledger are one
       * deployed stack's API when their deps are served together (lambdas/runs/stack-routes.ts,
       * adapters/approval-http.ts `createStackApprovalApi`).
       */
      served: { runs: servedRuns, approvals: approvalDeps, runEvents },
      /** The synthesized template the stack runs (its agent's state machine among those it holds). */
      template,
      /** The ledger's storage: what another agent's stack of the same deployment shares (`sharedLedger`), as a stack's agents share its table. */
      storage: opened.ledger,
      /** Signed links for a pending approval (what `savepoint approvals` prints). */
      approvalLinks: (approval: ApprovalRecord) => signedLinks(approvalSetup.links, approval),
      /**
       * "Deploys" another version of the agent (local/aws/state-machine-versions.ts): its module's handlers on the
       * template's definition become the engine's newest version. New runs start on it, and the
       * event-driven steps (recovery, expiry, kill) run its code; live runs keep their version.
       */
      deploy: (next: AgentDefinition<any, any, World>, deployOptions: { codeVersion?: string; template?: CfnTemplateJson } = {}) => {
        if (next.name !== agent.name) throw new Error(`deploy: the stack runs agent ${agent.name}, not ${next.name}`);
        assertDeployable(deployOptions.template ?? template);
        assertToolsFitTemplate(next, deployOptions.template ?? template, machine);
        concurrency.reserve(reservedConcurrency(deployOptions.template ?? template));
        const own = handlersFor(next, deployOptions.codeVersion ?? options.codeVersion ?? 'dev');
        // As CloudFormation would: the new template's policies replace the old, versions keep their
        // numbers; the module is new code, so each step function publishes a new Lambda version.
        const physical = iam?.deploy(deployOptions.template ?? template, { codeChanged: true });
        const version = extractStateMachine(deployOptions.template ?? template, { stateMachineLogicalId: machine, ...(physical && { physical }) });
        const number = engine.publishVersion({ definition: version.definition, tasks: bindTasks(version.tasks, () => own, deployOptions.template ?? template, options.functionTimeoutMs, concurrency), description: versionDescription(next) });
        handlers = own;
        return number;
      },
      /**
       * Runs the ExpireApprovals step now, as each approval's deadline timer does: what a test that
       * moves its clock past a deadline calls, instead of waiting for the real timer.
       */
      expireApprovals,
      /**
       * The version pruner (lambdas/steps/prune-versions.ts, prune-function-versions.ts; every 6
       * hours on AWS), as its role: deletes the state machine versions nothing needs (through the
       * Step Functions endpoint), keeping the newest `keep`, then the Lambda versions no remaining
       * one pins (through the twin's Lambda API; none with `iam: false`, which has none). The stack's pruner
       * on AWS does both for every agent of the stack (createPruneStackVersions).
       */
      pruneVersions: async (prune: { keep?: number; graceMs?: number } = {}): Promise<PruneResult & { functionVersions?: FunctionPruneResult }> => {
        const versions = sfnVersions(sfnAs(Steps.PruneVersions), startArn);
        const pruned = await createPruneVersions({ versions, clock, ...prune })();
        if (!iam) return pruned;
        const functions = lambdaFunctionVersions(lambdaClientAs(Steps.PruneVersions, iam));
        return { ...pruned, functionVersions: await createPruneFunctionVersions({ functions })(await remainingPins(versions)) };
      },
      /** The watchdog: resumes this agent's runs left running by a process that died (local/runtime/watchdog.ts). */
      /** Batches (local/runtime/batches.ts): `resume()` starts again those a process that died left unfinished. */
      batches,
      recoverOrphans: (sweep: { except?: string; onDamaged?: (runId: string, error: Error) => void } = {}) =>
        recoverOrphans({ ledger, executions: sfnExecutions(sfnAs(Steps.Sweep)), recover: createRecoverRun(recoverDeps), clock, agent: agent.name, failed: options.recovery !== false, ...sweep }),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
