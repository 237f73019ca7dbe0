/**
 * A local deployment of a synthesized template: the physical ids CloudFormation would give its
 * resources, and how a later deploy changes them. What matters for the twin is what AWS keeps
 * across deploys:
 *
 * - A Lambda `AWS::Lambda::Version` is immutable. A deploy that changes a function's code gives
 *   its `currentVersion` a new logical id (CDK hashes the code into it), so CloudFormation creates
 *   a new version (the next number) and, since CDK retains old versions, keeps the old one.
 * - An `AWS::StepFunctions::StateMachineVersion` likewise: a new one per changed definition.
 * - Roles' policies are replaced by the new template's: there is one policy per role, not one per
 *   version, so a live execution of an old state machine version is authorized by today's policy.
 *
 * `Ref` and `Fn::GetAtt Arn` resolve to the ARNs below (region us-east-1, account 000000000000,
 * the local engine's); a resource's name is its logical id, as local/template/asl.ts has always used.
 */
import { agentStateMachineIds, type CfnResource, type CfnTemplateJson, type PhysicalNames } from '../../template/asl.js';

export const LOCAL_ACCOUNT = '000000000000';
export const LOCAL_REGION = 'us-east-1';
const PARTITION = 'aws';

/** Version numbers handed out so far, by the logical id of the version resource. */
export interface DeploymentState {
  /** `AWS::Lambda::Version` logical id → its function and number (per function, 1, 2, …). */
  readonly lambdaVersions: ReadonlyMap<string, { readonly functionId: string; readonly number: number }>;
  /** `AWS::StepFunctions::StateMachineVersion` logical id → its number. */
  readonly stateMachineVersions: ReadonlyMap<string, number>;
  /** Function logical id → the highest version number published for it (versions 1 to it were published; retained ones stay). */
  readonly publishedLambdaVersions: ReadonlyMap<string, number>;
  /** State machine logical id → the highest version number published for it (each machine numbers its own). */
  readonly versionsPerMachine: ReadonlyMap<string, number>;
}

export const EMPTY_DEPLOYMENT: DeploymentState = { lambdaVersions: new Map(), stateMachineVersions: new Map(), publishedLambdaVersions: new Map(), versionsPerMachine: new Map() };

/**
 * Deploys `template` over `previous`, as CloudFormation would: a version resource already there
 * keeps its number, a new one gets its function's (or state machine's) next number. With
 * `codeChanged` (the same template over new code: a local deploy of another agent module), every
 * Lambda version resource is a new one — on AWS CDK's logical id of `currentVersion` changes with
 * the code's hash — and gets its function's next number; the old numbers stay published.
 */
export function deploy(template: CfnTemplateJson, previous: DeploymentState = EMPTY_DEPLOYMENT, options: { codeChanged?: boolean } = {}): DeploymentState {
  const resources = template.Resources ?? {};
  const lambdaVersions = new Map(previous.lambdaVersions);
  const stateMachineVersions = new Map(previous.stateMachineVersions);
  const publishedLambdaVersions = new Map(previous.publishedLambdaVersions);
  const versionsPerMachine = new Map(previous.versionsPerMachine);
  for (const [id, resource] of Object.entries(resources)) {
    if (resource.Type === 'AWS::Lambda::Version' && (options.codeChanged === true || !lambdaVersions.has(id))) {
      const functionId = refOf(resource.Properties?.['FunctionName']) ?? id;
      const number = (publishedLambdaVersions.get(functionId) ?? 0) + 1;
      publishedLambdaVersions.set(functionId, number);
      lambdaVersions.set(id, { functionId, number });
    }
    if (resource.Type === 'AWS::StepFunctions::StateMachineVersion' && !stateMachineVersions.has(id)) {
      // Numbered per state machine, as Step Functions numbers each machine's versions (a stack of several agents has one machine each).
      const machine = refOf(resource.Properties?.['StateMachineArn']) ?? '';
      const number = (versionsPerMachine.get(machine) ?? 0) + 1;
      versionsPerMachine.set(machine, number);
      stateMachineVersions.set(id, number);
    }
  }
  return { lambdaVersions, stateMachineVersions, publishedLambdaVersions, versionsPerMachine };
}

/** The ARNs `Ref` and `Fn::GetAtt Arn` resolve to, in this deployment. */
export function physicalNames(template: CfnTemplateJson, state: DeploymentState): PhysicalNames {
  const resources = template.Resources ?? {};
  // A version or an alias is its own state machine's (the agent's, in a template of several); else the template's (first) agent's.
  const stateMachineArn = (of?: string): string => {
    const id = of !== undefined && resources[of]?.Type === 'AWS::StepFunctions::StateMachine' ? of : agentStateMachineIds(resources)[0];
    const machine = id === undefined ? undefined : resources[id];
    const name = typeof machine?.Properties?.['StateMachineName'] === 'string' ? (machine.Properties['StateMachineName'] as string) : id;
    return arn('states', `stateMachine:${name ?? 'unknown'}`);
  };
  /** The state machine an alias routes to: that of the version its routing names. */
  const aliasMachine = (alias: CfnResource): string | undefined => {
    const routes = (alias.Properties?.['RoutingConfiguration'] as { StateMachineVersionArn?: unknown }[] | undefined) ?? [];
    const version = routes.map((route) => (route.StateMachineVersionArn as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt']?.[0] ?? refOf(route.StateMachineVersionArn)).find((id) => id !== undefined);
    return version === undefined ? undefined : refOf(resources[version]?.Properties?.['StateMachineArn']);
  };
  const arnOf = (id: string, resource: CfnResource): string | undefined => {
    switch (resource.Type) {
      case 'AWS::Lambda::Function':
        return arn('lambda', `function:${id}`);
      case 'AWS::Lambda::Version': {
        const version = state.lambdaVersions.get(id);
        const fn = version?.functionId ?? refOf(resource.Properties?.['FunctionName']) ?? id;
        return arn('lambda', `function:${fn}:${version?.number ?? 1}`);
      }
      case 'AWS::StepFunctions::StateMachine':
        return stateMachineArn(id);
      case 'AWS::StepFunctions::StateMachineVersion':
        return `${stateMachineArn(refOf(resource.Properties?.['StateMachineArn']))}:${state.stateMachineVersions.get(id) ?? 1}`;
      case 'AWS::StepFunctions::StateMachineAlias':
        return `${stateMachineArn(aliasMachine(resource))}:${String(resource.Properties?.['Name'] ?? id)}`;
      case 'AWS::DynamoDB::Table':
      case 'AWS::DynamoDB::GlobalTable':
        return arn('dynamodb', `table/${id}`);
      case 'AWS::KMS::Key':
        return arn('kms', `key/${id}`);
      case 'AWS::SecretsManager::Secret':
        return arn('secretsmanager', `secret:${id}-local`);
      case 'AWS::SQS::Queue':
        return arn('sqs', id);
      case 'AWS::SNS::Topic':
        return arn('sns', id);
      case 'AWS::IAM::Role':
        // A role's ARN carries its path (`role/<path><name>`): a policy may name roles by it.
        return `arn:${PARTITION}:iam::${LOCAL_ACCOUNT}:role${typeof resource.Properties?.['Path'] === 'string' ? resource.Properties['Path'] : '/'}${id}`;
      case 'AWS::Events::Rule':
        return arn('events', `rule/${id}`);
      case 'AWS::Logs::LogGroup':
        return arn('logs', `log-group:${id}:*`);
      default:
        return undefined;
    }
  };
  return {
    // What CloudFormation documents as each type's `Ref`: an ARN for these, a name for the others.
    ref: (id, resource) =>
      // A stage's Ref is its name (what an execute-api ARN holds).
      resource.Type === 'AWS::ApiGateway::Stage' && typeof resource.Properties?.['StageName'] === 'string' ? resource.Properties['StageName'] :
      ['AWS::Lambda::Version', 'AWS::StepFunctions::StateMachine', 'AWS::StepFunctions::StateMachineVersion', 'AWS::StepFunctions::StateMachineAlias', 'AWS::SecretsManager::Secret', 'AWS::SNS::Topic'].includes(resource.Type)
        ? arnOf(id, resource)
        : undefined,
    arn: arnOf,
  };
}

function arn(service: string, resource: string): string {
  return `arn:${PARTITION}:${service}:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${resource}`;
}

function refOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  const ref = (value as { Ref?: unknown } | undefined)?.Ref;
  return typeof ref === 'string' ? ref : undefined;
}
