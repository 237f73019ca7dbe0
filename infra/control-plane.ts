import { ArnFormat, Duration, Lazy, Names, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Role, ServicePrincipal, type IPrincipal, type IRole } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { SubscriptionFilter, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { BatchStateMachine } from './batch-state-machine.js';
import { FailedEvents } from './failed-events.js';
import { keyPolicy, onlyReaders, pinKeyPolicy, type KeyUse } from './keys.js';
import type { LedgerTable } from './ledger-table.js';
import { operationsOf } from './observability.js';
import { SharedRecovery } from './recovery.js';
import { SHARED_STEPS, STACK_TAG, StepFunction } from './step-function.js';
import { StackApi, type ApiStage } from './stack-api.js';
import { topLevelStack } from './top-level-stack.js';
import { Steps } from '../lambdas/shared/steps.js';

/**
 * What every agent of a stack shares, created once by the first agent that needs each piece:
 * nothing here depends on an agent's code, so one serves them all (issue 34, "a shared control
 * plane per stack"). It lives in the stack of the agents' roles — a nested stack's agents have
 * their own — because a key policy names the roles it lets use the key: a key in the parent naming
 * a nested stack's roles, whose functions are told the key, would make each stack wait on the other.
 *
 *   - the functions' log group: each function writes its own streams in it (Lambda names a stream
 *     of a shared group after its function: "[…]/<function name>[<version>]<id>",
 *     https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs-advanced.html);
 *   - the failed-events queue (infra/failed-events.ts) and the dead-letter queues of the rules
 *     (recovery's, the schedules'), each with one alarm (Operations.watchQueue), not one per agent;
 *   - the approval decision key and the starter key: one KMS HMAC key each, whose key policy names
 *     every agent's roles that use it, statement by use (a KMS key is $1 a month: infra/keys.ts);
 *   - the approval links' key (a secret) and the approvers' topic with its key, the schedules' role;
 *   - the API (infra/stack-api.ts): one REST API per stack serving every agent's runs and
 *     approvals, on one approval callback, one runs function and one events function;
 *   - the batch state machine (infra/batch-state-machine.ts), when an agent has `batches`: one for
 *     the agents of its stack, each batch's Tasks invoking the item function of the agent it names,
 *     its role allowed each such agent's item function and no other (`batches`);
 *   - the functions that need no agent's code (lambdas/adapters/control-plane-handlers.ts), one
 *     set per ledger: the approval expiry sweep (every minute), the sweeper (every 15 minutes) and
 *     the version pruner (every 6 hours), each granted what it does on each agent's own state
 *     machine, by ARN, as agents are added (`serve`).
 *
 * An agent's roles still name only its own state machine and its own records: sharing a key or a
 * queue gives no role a use it did not have.
 */
export class ControlPlane extends Construct {
  /** The shared control plane of `scope`'s stack (created with its first use). */
  static of(scope: Construct): ControlPlane {
    const stack = Stack.of(scope);
    return (stack.node.tryFindChild(CONTROL_PLANE_ID) as ControlPlane | undefined) ?? new ControlPlane(stack, CONTROL_PLANE_ID);
  }

  /** Where every step function of the stack logs (its own streams): the top-level stack's. */
  readonly logGroup: LogGroup;
  /**
   * The agents' state machines' execution logs (retained) and their approval APIs' access logs,
   * three months: the top-level stack's, one log group each whatever the number of agents.
   */
  readonly executionLogs: LogGroup;
  readonly apiAccessLogs: LogGroup;
  /** What the event-driven functions could not handle: the top-level stack's. */
  readonly failedEvents: FailedEvents;
  /** A nested stack's control plane keeps its keys; the rest is the top-level stack's. */
  readonly #root?: ControlPlane;
  readonly #queues = new Map<string, Queue>();
  readonly #keys = new Map<string, { key: Key; uses: KeyUse[] }>();
  readonly #shared = new Map<LedgerTable, SharedFunctions>();
  readonly #apis = new Map<LedgerTable, StackApi>();
  #schedule?: { role: Role; start: PolicyStatement };
  #linkKey?: { secret: Secret; readers: IRole[] };
  #approvalTopic?: { topic: Topic; key: Key; publishers: IPrincipal[]; subscribed: Set<string> };
  #batches?: BatchStateMachine;

  private constructor(scope: Construct, id: string) {
    super(scope, id);
    // In a nested stack, what the parent may hold without naming the nested stack's resources is
    // the parent's: the log group and the failed-events queue (a nested function is told their
    // names), and the shared functions (their roles name the agents' state machines by ARN, built
    // from names). Keys, whose policies name the roles, and the rules' dead-letter queues, whose
    // policies name the rules, stay beside what they name.
    const top = topLevelStack(this);
    if (top !== Stack.of(this)) {
      this.#root = ControlPlane.of(top);
      this.logGroup = this.#root.logGroup;
      this.executionLogs = this.#root.executionLogs;
      this.apiAccessLogs = this.#root.apiAccessLogs;
      this.failedEvents = this.#root.failedEvents;
      return;
    }
    this.logGroup = new LogGroup(this, 'FunctionLogs', { retention: RetentionDays.ONE_MONTH });
    this.executionLogs = new LogGroup(this, 'ExecutionLogs', { retention: RetentionDays.THREE_MONTHS, removalPolicy: RemovalPolicy.RETAIN });
    this.apiAccessLogs = new LogGroup(this, 'ApiAccessLogs', { retention: RetentionDays.THREE_MONTHS });
    this.failedEvents = new FailedEvents(this, 'FailedEvents');
    operationsOf(this).watchQueue('FailedEvents', this.failedEvents.queue);
  }

  /** The shared functions of `agent`'s ledger, granted what they do on its state machine. */
  serve(agent: ServedAgent): SharedFunctions {
    // The parent's functions serve the agents of its ledger; an agent with a ledger of its own in a
    // nested stack is served there (the parent naming the nested table would wait on it).
    if (this.#root && Stack.of(agent.ledger) === Stack.of(this.#root)) return this.#root.serve(agent);
    let shared = this.#shared.get(agent.ledger);
    if (!shared) {
      // The first ledger's keep their ids; another's (an agent with a table of its own) are named by it.
      const scope = this.#shared.size === 0 ? this : new Construct(this, Names.uniqueId(agent.ledger));
      shared = new SharedFunctions(scope, agent.ledger, this.logGroup, this.failedEvents);
      this.#shared.set(agent.ledger, shared);
    }
    shared.serve(agent);
    return shared;
  }

  /**
   * The stack's API (infra/stack-api.ts) of `ledger`'s agents (each added with `serve`): one REST
   * API and its three functions, created with the first agent, whose `agent` sets its stage. It lives in
   * the stack of the agents' roles, as the keys do (its callback and runs function are named in the
   * decision and starter keys' policies): a nested stack's agents have their own.
   */
  api(ledger: LedgerTable, agent: ApiStage): StackApi {
    let api = this.#apis.get(ledger);
    if (!api) {
      // The first ledger's keeps its id; another's (an agent with a table of its own) is named by it.
      const scope = this.#apis.size === 0 ? this : new Construct(this, `${Names.uniqueId(ledger)}Api`);
      api = new StackApi(scope, 'StackApi', { ledger, logGroup: this.logGroup, accessLogs: this.apiAccessLogs, first: agent });
      this.#apis.set(ledger, api);
    }
    return api;
  }

  /**
   * A dead-letter queue for events a rule could not deliver (`RecoveryDeadLetters`,
   * `ScheduleDeadLetters`), one per name for the whole stack, with its alarm.
   */
  deadLetters(name: 'RecoveryDeadLetters' | 'ScheduleDeadLetters'): Queue {
    let queue = this.#queues.get(name);
    if (!queue) {
      queue = new Queue(this, name, { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: Duration.days(14) });
      this.#queues.set(name, queue);
      operationsOf(this).watchQueue(name, queue);
    }
    return queue;
  }

  /**
   * The stack's KMS HMAC key `id`, with `uses` added to its key policy: a statement per use
   * (`sid`), naming the principals of every agent given that use. The policy is produced at synth,
   * so agents added later are in it; the account only administers it (infra/keys.ts).
   */
  macKey(id: string, description: string, uses: readonly KeyUse[]): Key {
    let entry = this.#keys.get(id);
    if (!entry) {
      const key = new Key(this, id, {
        description,
        keySpec: KeySpec.HMAC_256,
        keyUsage: KeyUsage.GENERATE_VERIFY_MAC,
        removalPolicy: RemovalPolicy.RETAIN,
        pendingWindow: Duration.days(30),
        policy: keyPolicy([]),
      });
      const created = { key, uses: [] as KeyUse[] };
      pinKeyPolicy(key, () => keyPolicy(mergedUses(created.uses)));
      this.#keys.set(id, (entry = created));
    }
    entry.uses.push(...uses);
    return entry.key;
  }

  /**
   * The stack's batch state machine (one, whatever the number of agents with batches), made with its
   * first use: each agent allows it its own item function (`allowItemFunction`) and its manifest
   * buckets. In this control plane's stack, a nested stack's included: its role names the item
   * functions beside it.
   */
  batches(): BatchStateMachine {
    // Named for the deployed stack (and a nested stack's id), as the agents' are: its ARN is built, not referenced.
    const nested = Stack.of(this) === topLevelStack(this) ? '' : `-${Stack.of(this).node.id}`;
    this.#batches ??= new BatchStateMachine(this, 'Batches', { stateMachineName: `${topLevelStack(this).stackName}${nested}-batches`.slice(-80) });
    return this.#batches;
  }

  /**
   * The role EventBridge starts the scheduled agents' runs as, one for the stack: a start on an
   * alias is authorized against the state machine's own ARN (Step Functions, "Authorization for
   * versions and aliases"), so its one statement lists each scheduled agent's state machine.
   */
  scheduleRole(stateMachineArn: string): Role {
    if (!this.#schedule) {
      const role = new Role(this, 'ScheduleRole', { assumedBy: new ServicePrincipal('events.amazonaws.com'), description: 'Starts the scheduled runs of the stack\'s agents.' });
      const start = new PolicyStatement({ actions: ['states:StartExecution'] });
      role.addToPrincipalPolicy(start);
      this.#schedule = { role, start };
    }
    this.#schedule.start.addResources(stateMachineArn);
    return this.#schedule.role;
  }

  /**
   * The key approval links are signed with (a generated secret), one for the stack: read by each
   * agent's RequestApproval (signs) and approval callback (verifies), and by no other principal —
   * its resource policy denies everyone else, administrators included (infra/keys.ts).
   */
  linkKey(readers: readonly IRole[]): Secret {
    if (!this.#linkKey) {
      const secret = new Secret(this, 'LinkKey', { description: 'HMAC key of the signed approval links', generateSecretString: { passwordLength: 64, excludePunctuation: true } });
      const shared = { secret, readers: [] as IRole[] };
      onlyReaders(secret, () => shared.readers.map((role) => role.roleArn));
      this.#linkKey = shared;
    }
    for (const role of readers) if (!this.#linkKey.readers.includes(role)) this.#linkKey.readers.push(role);
    return this.#linkKey.secret;
  }

  /**
   * The approvers' topic (infra/approvals.ts), one for the stack, encrypted with a key of its own:
   * SNS may use the key for the topic, each agent's RequestApproval (`publisher`) only through SNS.
   * Each approver named at synth is subscribed once, filtered to their own messages (a link is in
   * its approver's message only, whichever agent asks).
   */
  approvalTopic(publisher: IPrincipal, approvers: readonly string[]): { topic: Topic; key: Key } {
    if (!this.#approvalTopic) {
      const key = new Key(this, 'ApprovalTopicKey', { description: 'Encrypts the approvals topic (the approvers\' links)', enableKeyRotation: true });
      const { region, account } = Stack.of(this);
      const publishers: IPrincipal[] = [];
      pinKeyPolicy(key, () =>
        keyPolicy([
          { sid: 'RequestApprovalPublishesThroughSns', principals: publishers, actions: ['kms:GenerateDataKey*', 'kms:Decrypt'], conditions: { StringEquals: { 'kms:ViaService': `sns.${region}.amazonaws.com` } } },
          { sid: 'SnsUsesItForTheTopic', principals: [new ServicePrincipal('sns.amazonaws.com')], actions: ['kms:GenerateDataKey*', 'kms:Decrypt'], conditions: { StringEquals: { 'aws:SourceAccount': account } } },
        ]),
      );
      const topic = new Topic(this, 'ApprovalTopic', { displayName: 'savepoint approvals', enforceSSL: true, masterKey: key });
      this.#approvalTopic = { topic, key, publishers, subscribed: new Set() };
    }
    const shared = this.#approvalTopic;
    if (!shared.publishers.includes(publisher)) shared.publishers.push(publisher);
    for (const address of approvers) {
      if (shared.subscribed.has(address)) continue;
      shared.subscribed.add(address);
      shared.topic.addSubscription(new EmailSubscription(address, { filterPolicy: { approver: SubscriptionFilter.stringFilter({ allowlist: [address] }) } }));
    }
    return { topic: shared.topic, key: shared.key };
  }
}

const CONTROL_PLANE_ID = 'ControlPlane';

/** Uses with the same `sid` as one statement over all their principals (a role named once). */
function mergedUses(uses: readonly KeyUse[]): KeyUse[] {
  const bySid = new Map<string, KeyUse & { principals: IPrincipal[] }>();
  for (const use of uses) {
    const seen = bySid.get(use.sid);
    if (!seen) bySid.set(use.sid, { ...use, principals: [...use.principals] });
    else for (const principal of use.principals) if (!seen.principals.includes(principal)) seen.principals.push(principal);
  }
  return [...bySid.values()];
}

/** What the shared functions need of an agent: its ledger, its state machine, and its settings. */
export interface ServedAgent {
  readonly agentName: string;
  /** The agent's module (the stack's ExecutionStopped bundles every agent's: infra/recovery.ts). */
  readonly entry: string;
  readonly ledger: LedgerTable;
  /** The agent state machine's ARNs, built from its fixed name. */
  readonly stateMachine: { readonly stateMachine: string; readonly executions: string };
  readonly keepVersions: number;
  readonly maxRecoveries: number;
  /** Whether its runs are traced: the sweeper, which may end a run, then reads its conversation (`traceRunEnd`). */
  readonly traced: boolean;
  /** The state machines of the agents it runs as tools (`children`): their ends wake its waits (infra/recovery.ts). */
  readonly childMachines: readonly string[];
}

/**
 * The expiry sweep, the sweeper and the version pruner of one ledger, with their schedules. Each
 * role's statements list the agents' state machines one by one (a statement per kind of use, its
 * resources growing with each agent): a shared role reaches only the stack's agents.
 */
export class SharedFunctions {
  readonly expireApprovals: StepFunction;
  readonly sweep: StepFunction;
  readonly pruneVersions: StepFunction;
  /** RecoverRun and ExecutionStopped with their rules (infra/recovery.ts). */
  readonly recovery: SharedRecovery;
  readonly #keepVersions: Record<string, number> = {};
  #maxRecoveries = 1;
  #traced = false;
  readonly #statements: { taskResponse: PolicyStatement; start: PolicyStatement; describe: PolicyStatement; prune: PolicyStatement };

  constructor(scope: Construct, readonly ledger: LedgerTable, logGroup: LogGroup, failedEvents: FailedEvents) {
    const stack = Stack.of(scope);
    // The metrics' `service`: the deployed stack (the shared functions' figures are the stack's, not an agent's).
    const service = topLevelStack(scope).stackName;
    const fn = (id: string, step: typeof Steps.ExpireApprovals | typeof Steps.Sweep | typeof Steps.PruneVersions, environment: Record<string, string> = {}, timeout?: Duration) =>
      new StepFunction(scope, id, { step, bundledWith: SHARED_STEPS, logGroup, ...(timeout && { timeout }), environment: { POWERTOOLS_SERVICE_NAME: service, ...environment } });
    this.expireApprovals = fn('ExpireApprovalsFunction', Steps.ExpireApprovals);
    // The largest bound of the agents it serves: it never gives up a run its agent's own recovery would still resume.
    this.sweep = fn('SweepFunction', Steps.Sweep, { MAX_RECOVERIES: Lazy.string({ produce: () => String(this.#maxRecoveries) }) }, Duration.minutes(5));
    this.pruneVersions = fn('PruneVersionsFunction', Steps.PruneVersions, {
      STATE_MACHINE_ARN_PREFIX: stack.formatArn({ service: 'states', resource: 'stateMachine', resourceName: `${topLevelStack(scope).stackName}-`, arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
      PRUNE_VERSIONS: Lazy.string({ produce: () => JSON.stringify(this.#keepVersions) }),
    });
    ledger.grantTo(this.expireApprovals, 'expireApprovals');
    ledger.grantTo(this.sweep, 'sweep');
    const statement = (actions: string[]) => new PolicyStatement({ actions });
    this.#statements = {
      taskResponse: statement(['states:SendTaskSuccess', 'states:SendTaskFailure', 'states:SendTaskHeartbeat']),
      // A run is resumed on the version its ended execution ran (DescribeExecution), else on its alias:
      // both authorized on the state machine's own ARN.
      start: statement(['states:StartExecution']),
      describe: statement(['states:DescribeExecution']),
      // Each call is authorized on the state machine's own ARN, whichever version or alias it names.
      prune: statement(['states:DescribeStateMachine', 'states:ListStateMachineVersions', 'states:ListStateMachineAliases', 'states:DescribeStateMachineAlias', 'states:ListExecutions', 'states:DeleteStateMachineVersion']),
    };
    this.expireApprovals.addToRolePolicy(this.#statements.taskResponse);
    this.sweep.addToRolePolicy(this.#statements.start);
    this.sweep.addToRolePolicy(this.#statements.describe);
    this.pruneVersions.addToRolePolicy(this.#statements.prune);
    this.pruneVersions.addToRolePolicy(functionVersionsStatement(stack, service));
    const schedule = (id: string, description: string, every: Duration, target: StepFunction, maxEventAge?: Duration) =>
      new Rule(scope, id, { description, schedule: Schedule.rate(every), targets: [new LambdaFunction(target, { retryAttempts: 2, deadLetterQueue: failedEvents.queue, ...(maxEventAge && { maxEventAge }) })] });
    schedule('ApprovalExpirySweep', 'Escalates approvals whose deadline has passed (every agent of the stack).', Duration.minutes(1), this.expireApprovals);
    schedule('SweepRule', 'Resumes runs whose execution ended unnoticed; reports approvals whose execution is gone (every agent of the stack).', Duration.minutes(15), this.sweep, Duration.minutes(10));
    schedule('VersionPruning', 'Deletes old versions of the agents\' state machines that nothing needs.', Duration.hours(6), this.pruneVersions);
    this.recovery = new SharedRecovery(scope, ledger, { logGroup, service, failedEvents: failedEvents.queue, deadLetters: ControlPlane.of(scope).deadLetters('RecoveryDeadLetters') });
    for (const f of [this.expireApprovals, this.sweep, this.pruneVersions, this.recovery.recoverRun, this.recovery.executionStopped]) failedEvents.protect(f);
    // Their metrics are the stack's, and so are the alarms on them.
    operationsOf(scope).watchShared(service);
  }

  /** Adds `agent`'s state machine to what each shared role may act on. */
  serve(agent: ServedAgent): void {
    if (agent.agentName in this.#keepVersions) throw new Error(`ControlPlane: agent ${agent.agentName} is served twice by the stack's shared functions`);
    this.#keepVersions[agent.agentName] = agent.keepVersions;
    this.#maxRecoveries = Math.max(this.#maxRecoveries, agent.maxRecoveries);
    this.#statements.taskResponse.addResources(agent.stateMachine.stateMachine);
    this.#statements.start.addResources(agent.stateMachine.stateMachine);
    this.#statements.describe.addResources(agent.stateMachine.executions);
    this.#statements.prune.addResources(agent.stateMachine.stateMachine);
    this.recovery.serve(agent);
    // A run's end exports its budget checks, rebuilt from its conversation (a query): only when traced.
    if (agent.traced && !this.#traced) {
      this.#traced = true;
      this.ledger.grantRole(this.sweep, 'traceRunEnd');
    }
  }
}

/**
 * The pruner's Lambda calls (lambdas/adapters/lambda-versions.ts): ListVersionsByFunction, and
 * DeleteFunction of a version, on the functions tagged with this stack (STACK_TAG, which every
 * agent's step function carries) and no other — one statement, whatever the number of agents,
 * where listing 20 agents' functions and their versions would pass IAM's 10,240-character inline
 * policy limit. Lambda's attribute-based access control
 * (https://docs.aws.amazon.com/lambda/latest/dg/attribute-based-access-control.html) says a
 * function's tags can be tested with `aws:ResourceTag/<key>`, and that its tags apply to its
 * versions. What could not be verified here: the doc's per-action list of the actions that
 * support the key was not in the text we could read, so that DeleteFunction and
 * ListVersionsByFunction are among them is from the Service Authorization Reference's function
 * resource type (condition key aws:ResourceTag/${TagKey}) as we recall it — check it on a real
 * account: a refused call fails the pruning pass (AccessDeniedException), it deletes nothing.
 * `function:*` matches qualified ARNs too (`*` spans colons): nothing here can delete a whole
 * function but the code, which sends a numeric Qualifier always.
 */
function functionVersionsStatement(stack: Stack, stackName: string): PolicyStatement {
  return new PolicyStatement({
    actions: ['lambda:ListVersionsByFunction', 'lambda:DeleteFunction'],
    resources: [stack.formatArn({ service: 'lambda', resource: 'function', resourceName: '*', arnFormat: ArnFormat.COLON_RESOURCE_NAME })],
    conditions: { StringEquals: { [`aws:ResourceTag/${STACK_TAG}`]: stackName } },
  });
}
