import { Stack, Token } from 'aws-cdk-lib';
import { PolicyStatement, type IRole } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Topic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { principalDirectory, principalPatternProblem, type PrincipalDirectory } from '../lambdas/approvals/people.js';
import type { AgentDefinition } from '../lambdas/define.js';
import { shownValue } from '../lambdas/shared/text.js';
import { ControlPlane } from './control-plane.js';
import { addToSeparatePolicy } from './inline-policy-role.js';
import type { AgentApiSettings } from '../lambdas/runs/api-settings.js';

/** Who decides an agent's approvals, and how they are told (`DurableAgentProps.approvals`). */
export interface ApprovalSettings {
  /**
   * Who is sent a signed, single-use link to the approval page (e-mail addresses, chat handles; a
   * list, or one comma-separated string such as a stack parameter).
   * @default none: approvals are decided through the IAM-signed API only, by `approverPrincipals`
   * (with neither, nobody may decide them: synth warns when the agent can ask a person)
   */
  readonly approvers?: string | readonly string[];
  /** The identity that started a run may not approve its requests. @default true */
  readonly separationOfDuties?: boolean;
  /** Above this amount (minor units), two different approvers must approve. @default none */
  readonly secondApproverAboveMinor?: number;
  /**
   * An SNS topic (encrypted with a customer-managed KMS key) that carries each approver's link in a
   * message of its own with the attribute `approver`: subscribe each approver with the filter policy
   * `{"approver": ["<their address>"]}` (approvers given as e-mail addresses at synth are subscribed
   * so). The event on the default bus carries no link. `false` with `approvers` fails the synth: the
   * links would reach nobody.
   * @default true when there are approvers (links), else false
   */
  readonly topic?: boolean;
  /**
   * Who may decide through the IAM-signed API, by person: each key a person (the same name as their
   * link address in `approvers`, if they have one: then both are one person), each value the IAM
   * principals that are them — an IAM user ARN, a role ARN (every session of it is that person), or
   * an IAM Identity Center session ARN (`arn:aws:sts::<account>:assumed-role/AWSReservedSSO_<set>_<id>/<user>`,
   * wildcards allowed in the user). The API's resource policy denies everyone else, and the callback
   * refuses them (lambdas/approvals/people.ts).
   * @example { 'alice@example.com': 'arn:aws:sts::111122223333:assumed-role/AWSReservedSSO_Finance_0a1b2c3d4e5f6a7b/alice@example.com' }
   * @default none: nobody decides by IAM, only by signed link
   */
  readonly approverPrincipals?: Readonly<Record<string, string | readonly string[]>>;
  /**
   * Who may start runs through the runs API (`POST /runs`), by person, as `approverPrincipals`: a
   * run is recorded as started by that person, so separation of duties knows them whichever way
   * they decide. The API's resource policy denies everyone else.
   * @default anyone IAM lets call the runs API, recorded as their principal
   */
  readonly starterPrincipals?: Readonly<Record<string, string | readonly string[]>>;
  /**
   * What a run needs whose starter is nobody the deployment names — a plain `StartExecution`, the
   * schedule (anyone who may start the state machine can write a scheduled event), a runs-API caller
   * in neither list: `two-approvers`, two different people approve each of its approvals, so nobody
   * approves alone a run they may have started; `any-approver` gives that up. Only with separation of duties.
   * @default 'two-approvers'
   */
  readonly unknownStarter?: 'two-approvers' | 'any-approver';
  /**
   * Which decision key signs: KMS rotates no HMAC key (neither automatically nor on demand), so a
   * rotation is a new key. Raising it creates a new key (the old one is retained, with its policy)
   * and the callback signs with it; list the old key's ARN in `previousDecisionKeys` until no
   * decision it signed is still to be applied. Each decision names the key it was signed with.
   * @default 1
   */
  readonly decisionKeyVersion?: number;
  /** ARNs of decision keys this deployment replaced: decisions they signed still verify. @default none */
  readonly previousDecisionKeys?: readonly string[];
}

export interface ApprovalMachineryProps {
  readonly settings?: ApprovalSettings;
  /** Requests approvals: sends the event and signs the links. */
  readonly requestApproval: LambdaFunction;
  /** Applies approved calls: verifies decisions. */
  readonly callTool: LambdaFunction;
  /** BudgetCheck applies approved budget extensions (the executions on a definition before 0.8.0): it verifies their decisions too. */
  readonly budgetCheck?: LambdaFunction;
  /** CallModel makes the harness's decision before each model call (lambdas/steps/call-model.ts), applying approved budget extensions: it verifies them too. */
  readonly callModel?: LambdaFunction;
  /** The stack's approval callback (infra/stack-api.ts): verifies links, signs decisions. Absent when the agent is served by no API. */
  readonly callback?: LambdaFunction;
  /** The approval page's URL (`…/decide`), when there is an API. */
  readonly pageUrl?: string;
  /** Records who started a run: it verifies the runs API's signature of the starter. */
  readonly startRun?: LambdaFunction;
  /** The stack's runs function (`POST /runs`): signs who started a run. Absent when the agent is served by no API. */
  readonly runsApi?: LambdaFunction;
  /** The batch item function (`batches`): starts a batch's runs through the runs API's start path, signing their starter as the runs API does. */
  readonly batchItem?: LambdaFunction;
}

/**
 * What approvals need on AWS, each grant to the one function that needs it:
 *   - the approval-requested event (EventBridge `PutEvents` on the default bus, with no link) and
 *     the approvers' topic (SNS, its own KMS key), for RequestApproval: each link in its approver's
 *     message only;
 *   - the link key (a generated Secrets Manager secret), read by RequestApproval (signs links)
 *     and the callback (verifies them), and by no one else: its resource policy denies every other
 *     principal (infra/keys.ts);
 *   - the decision key (a KMS HMAC key whose key policy names its users: infra/keys.ts): the
 *     callback may `GenerateMac` and `VerifyMac`, CallTool, BudgetCheck and CallModel (budget extensions) only
 *     `VerifyMac`; the account administers it and cannot sign — nothing else can forge a decision;
 *   - the starter key (likewise): the runs API may `GenerateMac`, StartRun only `VerifyMac` —
 *     a run's recorded starter is the principal API Gateway verified, never a field of the input
 *     (lambdas/runs/starter.ts);
 *   - the policy (separation of duties, a second approver) and the people, as this agent's settings
 *     in the stack's API functions' environment (`apiSettings`, infra/stack-api.ts): set by whoever
 *     deploys, out of reach of the run's input and the model.
 */
export class ApprovalMachinery extends Construct {
  readonly decisionKey?: Key;
  readonly starterKey?: Key;
  readonly linkKey?: Secret;
  readonly topic?: Topic;
  /** The approvals topic's key (a customer-managed KMS key: SNS and RequestApproval may use it). */
  readonly topicKey?: Key;
  /** What the stack's API functions decide this agent's approvals and starts by (lambdas/runs/api-settings.ts). */
  readonly apiSettings: AgentApiSettings = {};

  constructor(scope: Construct, id: string, props: ApprovalMachineryProps) {
    super(scope, id);
    const given = props.settings ?? {};
    // Its errors name the agent (this construct's scope) and the prop.
    const agent = `DurableAgent ${scope.node.id}`;
    checkApprovers(agent, given.approvers);
    const approvers = typeof given.approvers === 'string' ? given.approvers : (given.approvers ?? []).join(',');
    if (given.secondApproverAboveMinor !== undefined && (!Number.isInteger(given.secondApproverAboveMinor) || given.secondApproverAboveMinor < 0)) {
      throw new Error(`${agent}: approvals.secondApproverAboveMinor must be a whole amount in minor units ≥ 0, got ${given.secondApproverAboveMinor}`);
    }
    const { requestApproval, callTool, callback } = props;

    requestApproval.addEnvironment('APPROVAL_EVENT_BUS', 'default');
    requestApproval.addToRolePolicy(
      new PolicyStatement({ actions: ['events:PutEvents'], resources: [Stack.of(this).formatArn({ service: 'events', resource: 'event-bus', resourceName: 'default' })] }),
    );
    // Links only make sense with a page to open them on.
    const links = Boolean(approvers && props.pageUrl && callback);
    // A link is its approver's credential: it travels only on the topic, one message per approver
    // (the event on the default bus carries none: any rule there would receive it).
    if (links && given.topic === false) {
      throw new Error(`${agent}: approvals.topic: false leaves the approvers\' links no way to reach them (they are sent on the encrypted topic only); drop it, or drop approvals.approvers`);
    }
    if (given.topic ?? links) {
      // One topic for the stack's agents (infra/control-plane.ts); its key policy names this RequestApproval too.
      const { topic, key } = ControlPlane.of(this).approvalTopic(roleOf(requestApproval), literalApprovers(given.approvers));
      this.topic = topic;
      this.topicKey = key;
      // Not `grantPublish`: it would grant the key's use in the role's policy too; the key policy names the role.
      // In a policy of its own: the topic waits for its key, whose policy names the role (infra/inline-policy-role.ts).
      addToSeparatePolicy(requestApproval, new PolicyStatement({ actions: ['sns:Publish'], resources: [topic.topicArn] }));
      requestApproval.addEnvironment('APPROVAL_TOPIC_ARN', topic.topicArn);
    }
    if (!callback) return;

    if (links) {
      // The stack's link key (infra/control-plane.ts): only the agents' RequestApproval and callbacks read it.
      this.linkKey = ControlPlane.of(this).linkKey([roleOf(requestApproval), roleOf(callback)]);
      for (const fn of [requestApproval, callback]) {
        this.linkKey.grantRead(fn);
        fn.addEnvironment('APPROVAL_LINK_SECRET_ARN', this.linkKey.secretArn);
      }
      requestApproval.addEnvironment('APPROVAL_PAGE_URL', props.pageUrl!);
      requestApproval.addEnvironment('APPROVERS', approvers);
    }
    const settings: { -readonly [K in keyof AgentApiSettings]: AgentApiSettings[K] } = {};
    // The callback verifies this agent's links against this agent's approvers.
    if (links) settings.approvers = approvers;

    // Only the callback signs decisions; CallTool, BudgetCheck and CallModel (budget extensions) verify them.
    const verifiers = [callTool, ...(props.budgetCheck ? [props.budgetCheck] : []), ...(props.callModel ? [props.callModel] : [])];
    const keyVersion = given.decisionKeyVersion ?? 1;
    if (!Number.isInteger(keyVersion) || keyVersion < 1) throw new Error(`${agent}: approvals.decisionKeyVersion must be a whole number ≥ 1, got ${given.decisionKeyVersion}`);
    // Version 1 keeps the id it always had: a new id is a new key (the old one is retained).
    // The stack's key (infra/control-plane.ts): its policy names each agent's callback and verifiers.
    this.decisionKey = ControlPlane.of(this).macKey(keyVersion === 1 ? 'DecisionKey' : `DecisionKeyV${keyVersion}`, 'Signs approval decisions (only the approval callback can)', [
      { sid: 'CallbackSignsDecisions', principals: [roleOf(callback)], actions: ['kms:GenerateMac', 'kms:VerifyMac'] },
      { sid: 'StepsVerifyDecisions', principals: verifiers.map(roleOf), actions: ['kms:VerifyMac'] },
    ]);
    for (const fn of verifiers) fn.addEnvironment('DECISION_KEY_ID', this.decisionKey.keyArn);
    const previous = given.previousDecisionKeys ?? [];
    for (const arn of previous) if (!Token.isUnresolved(arn) && !/^arn:aws[\w-]*:kms:[\w-]+:\d{12}:key\/[\w-]+$/.test(arn)) throw new Error(`${agent}: approvals.previousDecisionKeys: expected a KMS key ARN, got ${JSON.stringify(arn)}`);
    if (previous.length > 0) for (const fn of verifiers) fn.addEnvironment('DECISION_PREVIOUS_KEY_IDS', previous.join(','));
    // The stack's callback signs with the key its first agent uses (DECISION_KEY_ID); an agent on
    // another key (its decisionKeyVersion), or with keys it replaced, names them in its settings.
    const signing = callbackKeys.get(callback) ?? callbackKeys.set(callback, this.decisionKey.keyArn).get(callback)!;
    callback.addEnvironment('DECISION_KEY_ID', signing);
    if (signing !== this.decisionKey.keyArn || previous.length > 0) {
      settings.decisionKeyId = this.decisionKey.keyArn;
      if (previous.length > 0) settings.previousDecisionKeyIds = [...previous];
    }

    if (props.runsApi && props.startRun) {
      // A key of its own: the approval callback cannot sign a starter, nor the runs API a decision.
      this.starterKey = ControlPlane.of(this).macKey('StarterKey', 'Signs who started a run (only the runs API can)', [
        { sid: 'RunsApiSignsStarters', principals: [roleOf(props.runsApi), ...(props.batchItem ? [roleOf(props.batchItem)] : [])], actions: ['kms:GenerateMac'] },
        { sid: 'StartRunVerifiesStarters', principals: [roleOf(props.startRun)], actions: ['kms:VerifyMac'] },
      ]);
      for (const fn of [props.runsApi, props.startRun, props.batchItem]) fn?.addEnvironment('STARTER_KEY_ID', this.starterKey.keyArn);
    }

    // Who is who (lambdas/approvals/people.ts): the callback resolves this agent's deciders, the runs function its starters.
    const { approverPrincipals, starterPrincipals } = peopleOf(given, agent);
    if (given.separationOfDuties === false) settings.separationOfDuties = false;
    const mutable = (directory: PrincipalDirectory) => Object.fromEntries(Object.entries(directory).map(([person, patterns]) => [person, [...patterns]]));
    if (Object.keys(approverPrincipals).length > 0) settings.approverPrincipals = mutable(approverPrincipals);
    if (starterPrincipals) settings.starterPrincipals = mutable(starterPrincipals);
    if (given.unknownStarter) settings.unknownStarter = given.unknownStarter;
    if (given.secondApproverAboveMinor !== undefined) settings.secondApproverAboveMinor = given.secondApproverAboveMinor;
    this.apiSettings = settings;
    // This agent's batch item function (lambdas/runs/batch.ts) starts runs through the runs API's
    // start path in its own bundle: it reads who is who from its environment, as a step does.
    if (props.batchItem) {
      props.batchItem.addEnvironment('APPROVER_PRINCIPALS', JSON.stringify(approverPrincipals));
      if (starterPrincipals) props.batchItem.addEnvironment('STARTER_PRINCIPALS', JSON.stringify(starterPrincipals));
      if (given.unknownStarter) props.batchItem.addEnvironment('UNKNOWN_STARTER', given.unknownStarter);
    }
  }
}

/** The decision key each stack callback signs with: its first agent's (the others name theirs in their settings when it differs). */
const callbackKeys = new WeakMap<LambdaFunction, string>();

/** The deployment's people, checked at synth (a bad principal names its setting, person and pattern). */
export function peopleOf(settings: ApprovalSettings, agent: string): { approverPrincipals: PrincipalDirectory; starterPrincipals?: PrincipalDirectory } {
  const check = (setting: 'approverPrincipals' | 'starterPrincipals'): PrincipalDirectory | undefined => {
    const given = settings[setting];
    if (given === undefined) return undefined;
    const directory = principalDirectory(given);
    for (const [person, patterns] of Object.entries(directory)) {
      if (person.trim() === '' || person.length > 200) throw new Error(`${agent}: approvals.${setting}: a person's name must be 1-200 characters, got ${JSON.stringify(person)}`);
      if (patterns.length === 0) throw new Error(`${agent}: approvals.${setting}.${person}: name at least one principal`);
      for (const pattern of patterns) {
        const problem = principalPatternProblem(pattern);
        if (problem) throw new Error(`${agent}: approvals.${setting}.${person}: ${problem}`);
      }
    }
    return directory;
  };
  const starters = check('starterPrincipals');
  return { approverPrincipals: check('approverPrincipals') ?? {}, ...(starters && { starterPrincipals: starters }) };
}

/** `approvals.approvers`, checked at synth: a string, or a list of strings (a number failed deep in the construct, naming nothing). */
function checkApprovers(agent: string, approvers: unknown): void {
  if (approvers === undefined || typeof approvers === 'string') return;
  if (!Array.isArray(approvers)) throw new Error(`${agent}: approvals.approvers: expected a list of addresses or one comma-separated string, got ${shownValue(approvers)}`);
  approvers.forEach((approver: unknown, index) => {
    if (typeof approver !== 'string') throw new Error(`${agent}: approvals.approvers[${index}]: expected an address (an e-mail address, a chat handle), got ${shownValue(approver)}`);
  });
}

/** The role a function runs as (every StepFunction has one). */
function roleOf(fn: LambdaFunction): IRole {
  if (!fn.role) throw new Error(`${fn.node.path}: a function without a role cannot be named in a key policy`);
  return fn.role;
}

/**
 * What a deployment where nobody may decide an agent's approvals warns at synth: the agent can ask
 * a person (a tool's `needsApproval` or `aggregate`, budgets that ask before they stop), and there
 * is no one to ask — no `approvers` (links) and no `approverPrincipals` (the IAM-signed API, when
 * the agent has it). Each approval would wait out its time and be escalated; undefined otherwise.
 */
export function nobodyDecidesWarning(
  agent: Partial<Pick<AgentDefinition, 'tools' | 'budgets'>>,
  settings: ApprovalSettings | undefined,
  approvalApi: boolean,
): string | undefined {
  const asks = (agent.tools ?? []).some((tool) => tool.needsApproval !== undefined || tool.aggregate !== undefined) || agent.budgets?.onBudgetExceeded === 'ask';
  if (!asks) return undefined;
  const approvers = settings?.approvers;
  const links = typeof approvers === 'string' ? approvers.trim() !== '' : (approvers ?? []).length > 0;
  const byIam = approvalApi && Object.keys(settings?.approverPrincipals ?? {}).length > 0;
  if (links || byIam) return undefined;
  return 'approvals: nobody may decide this agent\'s approvals (it asks a person: needsApproval, an aggregate limit or onBudgetExceeded "ask"): name approvals.approvers to send them signed links, or approvals.approverPrincipals to let them decide through the IAM-signed API; else each one waits out its time and is escalated';
}

/** The approvers given at synth as e-mail addresses (a list, or a comma-separated string that is not a token such as a parameter). */
function literalApprovers(approvers: ApprovalSettings['approvers']): string[] {
  const list = typeof approvers === 'string' ? (Token.isUnresolved(approvers) ? [] : approvers.split(',')) : [...(approvers ?? [])];
  return list.map((approver) => approver.trim()).filter((approver) => !Token.isUnresolved(approver) && /^[^@\s]+@[^@\s]+$/.test(approver));
}
