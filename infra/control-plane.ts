import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { ServicePrincipal, type IPrincipal, type IRole } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { SubscriptionFilter, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { FailedEvents } from './failed-events.js';
import { keyPolicy, onlyReaders, pinKeyPolicy, type KeyUse } from './keys.js';
import { operationsOf } from './observability.js';

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
 *   - the approval links' key (a secret) and the approvers' topic with its key.
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

  /** Where every step function of the stack logs (its own streams). */
  readonly logGroup: LogGroup;
  readonly failedEvents: FailedEvents;
  readonly #queues = new Map<string, Queue>();
  readonly #keys = new Map<string, { key: Key; uses: KeyUse[] }>();
  #linkKey?: { secret: Secret; readers: IRole[] };
  #approvalTopic?: { topic: Topic; key: Key; publishers: IPrincipal[]; subscribed: Set<string> };

  private constructor(scope: Construct, id: string) {
    super(scope, id);
    this.logGroup = new LogGroup(this, 'FunctionLogs', { retention: RetentionDays.ONE_MONTH });
    this.failedEvents = new FailedEvents(this, 'FailedEvents');
    operationsOf(this).watchQueue('FailedEvents', this.failedEvents.queue);
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
