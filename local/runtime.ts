import { SFNClient } from '@aws-sdk/client-sfn';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { approvalApiHandler } from '../lambdas/adapters/approval-http.js';
import { stepHandler } from '../lambdas/adapters/middleware.js';
import { sfnExecutions, sfnStarter, sfnTaskCallbacks } from '../lambdas/adapters/sfn.js';
import type { AgentDefinition, DevWorld, LedgerFacts } from '../lambdas/define.js';
import { BREAKER, CircuitBreaker, type BreakerPolicy } from '../lambdas/guards/breaker.js';
import { EmbeddedLedger } from '../lambdas/ledger/embedded-ledger.js';
import { serveLedger } from '../lambdas/ledger/remote-ledger.js';
import type { Ledger } from '../lambdas/ledger/ledger.js';
import type { LedgerSealer } from '../lambdas/ledger/seal.js';
import type { ApprovalRecord } from '../lambdas/ledger/records.js';
import { modelConfigFromEnv } from '../lambdas/models/config.js';
import { modelRegistry, wrapModels } from '../lambdas/models/registry.js';
import type { ModelClient } from '../lambdas/agent/messages.js';
import { createSteps } from '../lambdas/wiring/create-steps.js';
import { systemClock, type Clock } from '../lambdas/shared/ports.js';
import { createRecoverRun, type RecoveryPolicy } from '../lambdas/steps/recover-run.js';
import { ErrorNames } from '../lambdas/shared/errors.js';
import { Steps, type StepName } from '../lambdas/shared/steps.js';
import { startModelServer } from '../sim/model-server.js';
import { localUser, startApprovalApi } from './approval-api.js';
import { localApprovalKeys, localLedgerSealer } from './approval-keys.js';
import type { ApprovalRequested } from '../lambdas/approvals/notify.js';
import type { ApprovalPolicy } from '../lambdas/approvals/policy.js';
import { signedLinks } from '../lambdas/approvals/decision.js';
import { extractStateMachine, type AslState, type CfnTemplateJson } from './asl.js';
import { localAwsConfig } from './aws-config.js';
import { crashingLedger, crashingModel, type CrashPoints } from './crash.js';
import { LocalEngine, type TaskBinding } from './engine.js';
import { lambdaContext } from './lambda-context.js';
import { startSfnEndpoint } from './sfn-endpoint.js';
import { routeStatusChanges } from './status-events.js';
import { ledgerTableFromTemplate } from './template.js';
import { cachedTemplate, validatedDefinitions } from './template-cache.js';
import { recoverOrphans } from './watchdog.js';
import { versionDescription } from './versions.js';
import { ledgerFacts } from './world-facts.js';
import { LEDGER_PATHS, LEDGER_TABLE, type LedgerKind } from './ledger-files.js';

export { LEDGER_PATHS, LEDGER_TABLE, type LedgerKind };

const LOCAL_TIME_SCALE = 1 / 50;
/** infra's `States.WaitRetryAfter`, by value: importing infra/ would load the CDK (see template.ts). */
const WAIT_RETRY_AFTER = 'WaitRetryAfter';
const LOCAL_BREAKER: BreakerPolicy = {
  failures: BREAKER.failures,
  windowMs: BREAKER.windowMs * LOCAL_TIME_SCALE,
  openMs: BREAKER.openMs * LOCAL_TIME_SCALE,
  probeLeaseMs: BREAKER.probeLeaseMs * LOCAL_TIME_SCALE,
};

export interface LocalStackOptions<World extends DevWorld = DevWorld> {
  /** The agent to run: its steps, its simulated world and its scripted model. */
  readonly agent: AgentDefinition<any, any, World>;
  /** A data file the agent's simulated world serves (e.g. the day of refund requests). */
  readonly worldData?: string;
  /**
   * The agent's world, started by the caller (tests that hand it a fixture); the agent's
   * `dev.world` is started when absent.
   */
  readonly world?: World;
  /** Where the ledger and the provider's records live; in memory when absent (tests). */
  readonly stateDir?: string;
  /**
   * The ledger: `embedded` (in this process; `ledger.jsonl` in the state directory) or `dynalite`
   * (the DynamoDB ledger on the emulator, over loopback: the full-fidelity path, `ledger/` in the
   * state directory). @default 'embedded'
   */
  readonly ledger?: LedgerKind;
  /** Transient failures injected into model and provider requests. @default 0 */
  readonly failRate?: number;
  /** Seed of the injected failures. @default 1 */
  readonly seed?: number;
  /**
   * Milliseconds the engine waits before each retry, instead of the definition's backoff (which is
   * seconds to minutes): local time runs compressed. @default 20
   */
  readonly retryDelayMs?: number;
  /**
   * Milliseconds between tries while a circuit breaker is open (the definition says 30 s).
   * @default 600 (the definition's 30 s, compressed like the breaker)
   */
  readonly breakerRetryDelayMs?: number;
  /**
   * The circuit breakers' policy. Local time runs compressed (retries wait milliseconds, a run
   * makes ~10 provider calls a second), so the default compresses the breaker's window and
   * cooldown 50× too: injected independent failures do not look like an outage, a real outage
   * still opens it. @default 5 failures in 1.2 s, open 0.6 s
   */
  readonly breaker?: BreakerPolicy;
  /**
   * Lease of an in-flight tool call. Short locally: a lease only has to outlive a live call, and
   * after a crash the restarted engine should not wait long for the dead one's. `Agent.LeaseHeld`
   * retries wait half a lease each, so they outlast it. @default 1000
   */
  readonly leaseMs?: number;
  /**
   * Wraps the ledger every step, breaker and the approval API use, from outside (e.g.
   * `countingLedger`: how many round trips a step makes). @default none
   */
  readonly decorateLedger?: (ledger: Ledger) => Ledger;
  /**
   * Seals the ledger's records (lambdas/ledger/seal.ts). @default the state directory's key file
   * (`keys/ledger-seal.key`), or a random key in memory
   */
  readonly sealer?: LedgerSealer;
  /** Where the steps may be told to end the process (local/crash.ts). @default none */
  readonly crash?: CrashPoints;
  /**
   * Bound of automatic recoveries (failed executions, and runs the watchdog finds orphaned);
   * `false` turns the status-change rule off (the benchmark's restart-from-scratch baseline).
   */
  readonly recovery?: RecoveryPolicy | false;
  readonly clock?: Clock;
  readonly codeVersion?: string;
  /** A new approval waits for a person: the event approvers are told (with a signed link each). */
  readonly onApproval?: (approval: ApprovalRecord, event: ApprovalRequested) => void;
  /**
   * Who gets a signed link, and the policy. Locally one person is starter and approver, so
   * separation of duties is off by default. @default one approver, this machine's user; no second approver
   */
  readonly approvals?: {
    readonly approvers?: readonly string[];
    readonly policy?: ApprovalPolicy;
    /** Who the approval API records as the caller of /approvals (on AWS: the IAM principal API Gateway verified). @default this machine's user */
    readonly principal?: string;
  };
  /**
   * Wraps each model client from outside, after crash injection's wrap (the benchmark's scripted
   * model replays recorded turns through it: a model that does no work). @default none
   */
  readonly wrapModel?: (client: ModelClient, spec: string) => ModelClient;
  /** A model endpoint to use instead of the simulated model (tests of misbehaving models). */
  readonly modelUrl?: string;
  /**
   * Where the real providers (`anthropic:`, `openai:`, `bedrock:` models) are reached and with which
   * keys: `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `OPENAI_API_KEY`, … (lambdas/models/config.ts).
   * `sim:` models always go to the simulated model. @default process.env
   */
  readonly modelEnv?: Readonly<Record<string, string | undefined>>;
  /**
   * Milliseconds the engine waits out a provider's `retry-after` (the WaitRetryAfter state) instead
   * of its seconds: tests. @default the seconds the provider asked for
   */
  readonly retryAfterWaitMs?: number;
  /** Whether the simulated model is sent cache breakpoints (off: the uncached baseline). @default true */
  readonly promptCaching?: boolean;
  /** Environment for the agent's `deps` over the world's own (tests of misbehaving providers). */
  readonly agentEnv?: Readonly<Record<string, string>>;
  /** Where the steps' error lines go. @default discarded (the execution history has them) */
  readonly log?: (line: string) => void;
  /** The synthesized template; synthesized in-process when absent. */
  readonly template?: CfnTemplateJson;
}

export type LocalStack<World extends DevWorld = DevWorld> = Awaited<ReturnType<typeof startLocalStack<World>>>;

/**
 * Everything savepoint needs, on this machine: DynamoDB (dynalite), the simulated model and
 * payments provider as HTTP services, the synthesized state machine on the in-process engine with
 * its Step Functions API on loopback, the approval API, and the approval expiry sweep. The steps
 * are the same step functions inside the same middy handlers as on AWS; only their clients point
 * at loopback.
 */
export async function startLocalStack<World extends DevWorld = DevWorld>(options: LocalStackOptions<World>) {
  const { agent } = options;
  const clock = options.clock ?? systemClock;
  const closers: (() => Promise<void> | void)[] = [];
  let closed: Promise<void> | undefined;
  const close = () =>
    (closed ??= (async () => {
      for (const closeOne of closers.reverse()) await closeOne();
    })());
  try {
    if (options.stateDir) mkdirSync(options.stateDir, { recursive: true });
    // Synthesized once per change of the stack's sources, then read from the cache (local/template-cache.ts).
    const template = options.template ?? ((await cachedTemplate(agent.name, { onNote: options.log })) as CfnTemplateJson);
    const opened = await openLocalLedger(options.ledger ?? 'embedded', options.stateDir, template, closers, options.sealer);
    const ledger = options.decorateLedger ? options.decorateLedger(opened.ledger) : opened.ledger;

    if (!agent.dev?.policy && !options.modelUrl) throw new Error(`agent ${agent.name} has no scripted model (dev.policy) to run locally`);
    const model = await startModelServer({
      policy: agent.dev?.policy ?? (() => ({ content: [], stop_reason: 'end_turn' })),
      faults: { failRate: options.failRate ?? 0, seed: options.seed ?? 1 },
    });
    closers.push(model.close);
    // The world checks its records against what the ledger remembers doing (a deleted journal is reported).
    const world = options.world ?? (await startWorld(agent, options, clock, options.stateDir ? await ledgerFacts(opened.ledger) : undefined));
    if (!options.world) closers.push(() => world.close());

    // Task states call the handlers, bound below once the engine's API endpoint is listening.
    let handlers: Record<StepName, (event: unknown, timeoutMs: number) => Promise<unknown>>;
    let closing = false;
    // No polling: each pending approval arms one timer at its deadline, which runs ExpireApprovals.
    const expireApprovals = () => handlers[Steps.ExpireApprovals]({}, 30_000) as Promise<{ expired: string[] }>;
    const expireDue = () => {
      if (closing) return;
      expireApprovals().catch((error: unknown) => options.log?.(`approval expiry failed: ${String(error)}`));
    };
    const deadlines = deadlineTimers(clock, expireDue);
    closers.push(() => deadlines.clear());
    const extracted = extractStateMachine(template);
    const retryIntervalOverrides: Record<string, number[]> = {};
    const leaseMs = options.leaseMs ?? 1_000;
    // A version's Tasks call its own handlers (`current()` when bound: the first version's are the
    // stack's handlers; a deployed version's, its agent's — local/versions.ts).
    const bindVersion = (tasksOf: typeof extracted.tasks, current: () => typeof handlers) => {
      const tasks: Record<string, TaskBinding> = {};
      for (const [stateName, task] of Object.entries(tasksOf)) {
        if (!(Object.values(Steps) as string[]).includes(task.step)) throw new Error(`Task state ${stateName} runs an unknown step ${task.step}`);
        const timeoutMs = Math.min(task.timeoutSeconds ?? 60, 900) * 1000;
        tasks[stateName] = { waitForTaskToken: task.waitForTaskToken, invoke: (payload) => current()[task.step as StepName](payload, timeoutMs) };
      }
      return tasks;
    };
    // Version 1 keeps the handlers it started with, whatever is deployed after it.
    let firstHandlers: typeof handlers;
    const tasks = bindVersion(extracted.tasks, () => firstHandlers);
    for (const stateName of Object.keys(extracted.tasks)) {
      retryIntervalOverrides[stateName] = localRetryDelays(extracted.definition.States[stateName], { ...options, leaseMs });
    }
    const engine = new LocalEngine({
      definition: extracted.definition,
      stateMachineArn: extracted.stateMachineArn,
      tasks,
      retryIntervalOverrides,
      ...(options.retryAfterWaitMs !== undefined && { waitTimeOverrides: { [WAIT_RETRY_AFTER]: options.retryAfterWaitMs } }),
      now: () => clock.now(),
      validated: validatedDefinitions(),
    });
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
    const endpoint = await startSfnEndpoint(engine);
    closers.push(endpoint.close);

    // In process: the real SDK (serialize, sign, parse) without a loopback round trip per call.
    const sfn = new SFNClient({ ...localAwsConfig, endpoint: endpoint.url, requestHandler: endpoint.requestHandler });
    closers.push(() => sfn.destroy());
    const callbacks = sfnTaskCallbacks(sfn);
    const recoverDeps = { ledger, starter: sfnStarter(sfn, extracted.stateMachineArn), clock, policy: options.recovery || undefined };

    // Approvals (local/approval-keys.ts): signed links to the page the approval API serves, decisions signed with a local key.
    const keys = localApprovalKeys(options.stateDir);
    let pageUrl = '';
    const approvalSetup = {
      links: { signer: keys.links, approvers: options.approvals?.approvers ?? [localUser()], get pageUrl() { return pageUrl; } },
      decisionMac: keys.decisions,
      policy: options.approvals?.policy ?? { separationOfDuties: false },
    };

    const handlersFor = (agent: AgentDefinition<any, any, World>, codeVersion: string) => {
      const bind = (step: StepName, fn: (event: unknown, signal?: AbortSignal) => Promise<unknown>) => {
        const handler = stepHandler(fn, options.log ?? (() => undefined));
        return (event: unknown, timeoutMs: number) => {
          if (closing) return Promise.reject(new Error(`the local stack is closing: ${step} not invoked`));
          const invocation = handler(event, lambdaContext(step, timeoutMs)) as Promise<unknown>;
          inFlight.add(invocation);
          void invocation.catch(() => undefined).finally(() => inFlight.delete(invocation));
          return invocation;
        };
      };
      // Crash injection wraps the ledger and the model client from outside: the steps have no hooks.
      const stepLedger: Ledger = options.crash ? crashingLedger(ledger, options.crash) : ledger;
      // `sim:` models go to the simulated model; the others to the providers the environment names.
      const models = modelRegistry(() => ({ ...modelConfigFromEnv(options.modelEnv ?? process.env), sim: { baseUrl: options.modelUrl ?? model.url, apiKey: 'local', promptCaching: options.promptCaching ?? true, fetch: model.fetch } }));
      const crash = options.crash;
      const crashing = crash ? wrapModels(models, (client) => crashingModel(client, crash)) : models;
      const steps = createSteps(agent, {
        ledger: stepLedger,
        models: options.wrapModel ? wrapModels(crashing, options.wrapModel) : crashing,
        clock,
        breaker: new CircuitBreaker(ledger, clock, options.breaker ?? LOCAL_BREAKER),
        callbacks,
        // The history count BudgetCheck reads every turn comes from the engine itself: the same
        // number GetExecutionHistory serves (local/engine.ts), without an SDK round trip per turn.
        executions: { ...sfnExecutions(sfn), eventCount: async (executionArn: string) => engine.eventCount(executionArn) },
        starter: sfnStarter(sfn, extracted.stateMachineArn),
        leaseMs,
        codeVersion,
        recoveryPolicy: options.recovery || undefined,
        agentEnv: { ...world.env, ...options.agentEnv },
        // The world is served in process: a step's tool call pays no loopback round trip.
        ...(world.fetch && { agentFetch: world.fetch }),
        notify: (approval, event) => {
          deadlines.arm(approval);
          options.onApproval?.(approval, event);
        },
        approvals: approvalSetup,
      });
      const bound = Object.fromEntries(Object.entries(steps).map(([step, fn]) => [step, bind(step as StepName, fn)]));
      return {
        ...bound,
        [Steps.ApprovalCallback]: () => Promise.reject(new Error('the approval callback is served by the approval API')),
      } as unknown as Record<StepName, (event: unknown, timeoutMs: number) => Promise<unknown>>;
    };
    handlers = firstHandlers = handlersFor(agent, options.codeVersion ?? 'dev');

    // What EventBridge does on AWS with the rules on "Execution Status Change": an execution
    // stopped by StopExecution marks its run killed (ExecutionStopped); a failed or timed-out one
    // is resumed (RecoverRun). A closing engine reports nothing: the process is going away.
    const target = (step: StepName) => (event: unknown) => (closing ? Promise.resolve() : handlers[step](event, 30_000));
    const log = options.log ?? (() => undefined);
    routeStatusChanges(engine, ['ABORTED'], target(Steps.ExecutionStopped), log);
    if (options.recovery !== false) routeStatusChanges(engine, ['FAILED', 'TIMED_OUT'], target(Steps.RecoverRun), log);

    const approvalApi = await startApprovalApi(approvalApiHandler({ ledger, callbacks, clock, ...approvalSetup }), { ...(options.approvals?.principal && { user: options.approvals.principal }) });
    closers.push(approvalApi.close);
    pageUrl = approvalApi.pageUrl;

    // The approvals an earlier process left pending expire on time too.
    for (const approval of await ledger.listPendingApprovals()) deadlines.arm(approval);

    return {
      agent,
      engine,
      ledger,
      sfn,
      world,
      model,
      stateMachineArn: extracted.stateMachineArn,
      ledgerKind: options.ledger ?? 'embedded',
      endpoints: { ...opened.endpoint, sfn: endpoint.url, approvals: approvalApi.url, approvalPage: approvalApi.pageUrl, model: model.url, ...world.endpoints },
      /** Signed links for a pending approval (what `savepoint approvals` prints). */
      approvalLinks: (approval: ApprovalRecord) => signedLinks(approvalSetup.links, approval),
      /**
       * "Deploys" another version of the agent (local/versions.ts): its module's handlers on the
       * template's definition become the engine's newest version. New runs start on it, and the
       * event-driven steps (recovery, expiry, kill) run its code; live runs keep their version.
       */
      deploy: (next: AgentDefinition<any, any, World>, deployOptions: { codeVersion?: string; template?: CfnTemplateJson } = {}) => {
        if (next.name !== agent.name) throw new Error(`deploy: the stack runs agent ${agent.name}, not ${next.name}`);
        const own = handlersFor(next, deployOptions.codeVersion ?? options.codeVersion ?? 'dev');
        const version = extractStateMachine(deployOptions.template ?? template);
        const number = engine.publishVersion({ definition: version.definition, tasks: bindVersion(version.tasks, () => own), description: versionDescription(next) });
        handlers = own;
        return number;
      },
      /**
       * Runs the ExpireApprovals step now, as each approval's deadline timer does: what a test that
       * moves its clock past a deadline calls, instead of waiting for the real timer.
       */
      expireApprovals,
      /** The watchdog: resumes the runs left running by a process that died (local/watchdog.ts). */
      recoverOrphans: (options: { except?: string; onDamaged?: (runId: string, error: Error) => void } = {}) =>
        recoverOrphans({ ledger, executions: sfnExecutions(sfn), recover: createRecoverRun(recoverDeps), clock, ...options }),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Node's longest timer (~24.8 days); a later deadline is re-armed when this one fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * One timer per pending approval, firing at its `decideBy` (per the runtime's clock): `onDue` then
 * expires whatever is due. A decided approval's timer finds nothing to do. Timers never keep the
 * process alive by themselves.
 */
export function deadlineTimers(clock: Clock, onDue: () => void) {
  const timers = new Map<string, NodeJS.Timeout>();
  const arm = (approval: Pick<ApprovalRecord, 'approvalId' | 'decideBy' | 'status'>): void => {
    if (approval.status !== 'pending' || timers.has(approval.approvalId)) return;
    const delay = Math.max(0, Date.parse(approval.decideBy) - clock.now().getTime());
    const timer = setTimeout(() => {
      timers.delete(approval.approvalId);
      if (Date.parse(approval.decideBy) > clock.now().getTime()) arm(approval);
      else onDue();
    }, Math.min(delay, MAX_TIMER_MS));
    timer.unref();
    timers.set(approval.approvalId, timer);
  };
  return {
    arm,
    clear: () => {
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
    },
  };
}

/**
 * The engine's ledger, and the endpoint other processes reach it by: the embedded ledger served
 * over loopback (`ledger`, lambdas/ledger/remote-ledger.ts), or dynalite's own port (`dynamodb`).
 */
async function openLocalLedger(
  kind: LedgerKind,
  stateDir: string | undefined,
  template: CfnTemplateJson,
  closers: (() => Promise<void> | void)[],
  sealer?: LedgerSealer,
): Promise<{ ledger: Ledger; endpoint: { ledger: string } | { dynamodb: string } }> {
  if (kind === 'embedded') {
    const embedded = EmbeddedLedger.open({ dir: stateDir, ...(sealer && { sealer }) });
    closers.push(() => embedded.close());
    const served = await serveLedger(embedded);
    closers.push(served.close);
    return { ledger: embedded, endpoint: { ledger: served.url } };
  }
  // Loaded only for this ledger: the emulator and the DynamoDB SDK are ~40 MB an embedded run does not need.
  const [{ ensureTable, startDynamo }, { DynamoDbLedger }] = await Promise.all([import('./dynamo.js'), import('../lambdas/ledger/dynamodb-ledger.js')]);
  const dynamo = await startDynamo({ path: stateDir && join(stateDir, LEDGER_PATHS.dynalite) });
  closers.push(dynamo.close);
  await ensureTable(dynamo.client, ledgerTableFromTemplate(template as never, LEDGER_TABLE));
  return { ledger: new DynamoDbLedger(dynamo.client, LEDGER_TABLE, sealer ?? localLedgerSealer(stateDir)), endpoint: { dynamodb: dynamo.endpoint } };
}

/** The local wait before each retrier's retries, in the order of the state's `Retry` list. */
function localRetryDelays(state: AslState | undefined, options: Pick<LocalStackOptions, 'breakerRetryDelayMs' | 'leaseMs' | 'retryDelayMs'>): number[] {
  const retriers = (state?.['Retry'] ?? []) as { ErrorEquals: string[] }[];
  return retriers.map((retrier) =>
    retrier.ErrorEquals.includes(ErrorNames.CircuitOpen)
      ? (options.breakerRetryDelayMs ?? 600)
      : retrier.ErrorEquals.includes(ErrorNames.LeaseHeld)
        ? options.leaseMs! / 2
        : (options.retryDelayMs ?? 20),
  );
}


/** The agent's simulated world, or an empty one for an agent that needs none. */
async function startWorld<World extends DevWorld>(agent: AgentDefinition<any, any, World>, options: LocalStackOptions<World>, clock: Clock, ledger?: LedgerFacts): Promise<World> {
  if (!agent.dev?.world) return { env: {}, close: async () => undefined } as unknown as World;
  return agent.dev.world({
    stateDir: options.stateDir,
    dataFile: options.worldData,
    failRate: options.failRate ?? 0,
    seed: options.seed ?? 1,
    now: () => clock.now(),
    ...(ledger && { ledger }),
  });
}
