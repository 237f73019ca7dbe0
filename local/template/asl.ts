/**
 * Turns a synthesized CloudFormation template into a runnable ASL definition: the one state machine's
 * DefinitionString with every intrinsic resolved to fixed local values, plus the Lambda function
 * (and its SAVEPOINT_STEP) behind every Task state.
 */
import { isRecord } from '../../lambdas/shared/json.js';
import { BATCH_STATE_MACHINE_METADATA } from '../../lambdas/runs/batch.js';

export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
}


/**
 * The template's state machines the twin runs as an agent's: all but the stack's batch state
 * machine — unless it is the only one (the batch template the twin's batches run: local/template/batch.ts).
 */
export function agentStateMachineIds(resources: Record<string, CfnResource>): string[] {
  const ids = Object.keys(resources).filter((id) => resources[id]?.Type === STATE_MACHINE);
  const agents = ids.filter((id) => resources[id]?.Metadata?.[BATCH_STATE_MACHINE_METADATA] === undefined);
  return agents.length > 0 ? agents : ids;
}

/**
 * The state machine of agent `agentName` in a template of one or more agents: the one state machine
 * when there is one; else the agent state machine the stack names for the agent. A stack names each
 * agent's `<stack>-<agent>` (its runs function's STATE_MACHINE_ARN_PREFIX is `<stack>-`: infra/stack-api.ts),
 * so the machine is the one named `<prefix>-<agentName>` for a prefix every agent machine's name starts with.
 */
export function agentStateMachineOf(resources: Record<string, CfnResource>, agentName: string): string {
  const ids = agentStateMachineIds(resources);
  if (ids.length <= 1) return ids[0] ?? pickStateMachine(resources);
  const names = ids.map((id) => String(resources[id]!.Properties?.['StateMachineName'] ?? id));
  const matching = ids.filter((_, at) => {
    const prefix = names[at]!.endsWith(`-${agentName}`) ? names[at]!.slice(0, -agentName.length) : undefined;
    return prefix !== undefined && names.every((name) => name.startsWith(prefix));
  });
  if (matching.length !== 1) throw new Error(`The template's state machines (${names.join(', ')}) include none of agent ${agentName}`);
  return matching[0]!;
}

/**
 * The Lambda functions a state machine's definition and properties name (directly, or through one
 * of their `AWS::Lambda::Version`s), and those its role's policies name (the functions it may
 * invoke: BudgetCheck, which no state of a 0.8.0 definition invokes and the executions of older
 * versions still do): an agent's own functions, in a template of several agents.
 */
export function functionsOfStateMachine(resources: Record<string, CfnResource>, machineId: string): Set<string> {
  const named = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (!isRecord(value)) return;
    const ref = value['Ref'];
    const getAtt = value['Fn::GetAtt'];
    const id = typeof ref === 'string' ? ref : Array.isArray(getAtt) && typeof getAtt[0] === 'string' ? getAtt[0] : undefined;
    const resource = id === undefined ? undefined : resources[id];
    if (resource?.Type === 'AWS::Lambda::Function') named.add(id!);
    if (resource?.Type === 'AWS::Lambda::Version') {
      const fn = resource.Properties?.['FunctionName'] as { Ref?: unknown } | string | undefined;
      const fnId = typeof fn === 'string' ? fn : fn?.Ref;
      if (typeof fnId === 'string') named.add(fnId);
    }
    Object.values(value).forEach(walk);
  };
  const properties = resources[machineId]?.Properties;
  walk(properties);
  const roleArn = properties?.['RoleArn'] as { 'Fn::GetAtt'?: unknown[] } | undefined;
  const roleId = roleArn?.['Fn::GetAtt']?.[0];
  if (typeof roleId === 'string') {
    walk(resources[roleId]?.Properties?.['Policies']);
    for (const resource of Object.values(resources)) {
      const attached = resource.Type === 'AWS::IAM::Policy' && ((resource.Properties?.['Roles'] as { Ref?: unknown }[] | undefined) ?? []).some((role) => role.Ref === roleId);
      if (attached) walk(resource.Properties?.['PolicyDocument']);
    }
  }
  return named;
}

export interface CfnTemplateJson {
  Resources?: Record<string, CfnResource>;
  Parameters?: Record<string, { Default?: unknown }>;
}

/** A state as far as the local engine cares; everything else passes through untouched. */
export interface AslState {
  Type: string;
  Resource?: string;
  Parameters?: Record<string, unknown>;
  TimeoutSeconds?: number;
  TimeoutSecondsPath?: string;
  HeartbeatSeconds?: number;
  Branches?: AslDefinition[];
  ItemProcessor?: AslDefinition;
  Iterator?: AslDefinition;
  [field: string]: unknown;
}

export interface AslDefinition {
  StartAt: string;
  States: Record<string, AslState>;
  TimeoutSeconds?: number;
  [field: string]: unknown;
}

export interface TaskInfo {
  /** SAVEPOINT_STEP of the invoked function: which handler runs this Task. */
  step: string;
  functionLogicalId: string;
  waitForTaskToken: boolean;
  timeoutSeconds?: number;
  heartbeatSeconds?: number;
}

export interface ExtractOptions {
  /** Pick one state machine when the template has several. */
  stateMachineLogicalId?: string;
  region?: string;
  accountId?: string;
  partition?: string;
  /**
   * What `Ref` and `Fn::GetAtt …Arn` of a resource resolve to, where the caller knows it (local/aws/iam:
   * a deployment's version ARNs and resource ARNs); `undefined` falls back to the logical id.
   * @default the logical id stands in for every physical id
   */
  physical?: PhysicalNames;
}

/** A deployment's physical ids: the values CloudFormation would give `Ref` and `Fn::GetAtt Arn`. */
export interface PhysicalNames {
  ref?(logicalId: string, resource: CfnResource): string | undefined;
  arn?(logicalId: string, resource: CfnResource): string | undefined;
}

export interface ExtractedStateMachine {
  logicalId: string;
  name: string;
  stateMachineArn: string;
  definition: AslDefinition;
  tasks: Record<string, TaskInfo>;
}

const STATE_MACHINE = 'AWS::StepFunctions::StateMachine';
const LAMBDA_FUNCTION = 'AWS::Lambda::Function';
const LAMBDA_INVOKE = /^arn:[^:]+:states:::lambda:invoke(\.waitForTaskToken)?$/;

interface Env {
  resources: Record<string, CfnResource>;
  parameters: Record<string, { Default?: unknown }>;
  region: string;
  accountId: string;
  partition: string;
  /** Names the current resource in error messages. */
  where: string;
  physical?: PhysicalNames;
}

export function extractStateMachine(template: CfnTemplateJson, opts: ExtractOptions = {}): ExtractedStateMachine {
  const { env, ...machine } = resolvedStateMachine(template, opts);
  return { ...machine, tasks: mapTasks(machine.definition, env) };
}

/**
 * The state machine's definition, resolved, without binding its Tasks to the template's functions:
 * for a definition whose Tasks invoke the function their input names (`FunctionName.$`, the batch
 * state machine's), which the twin binds by state name instead.
 */
export function extractDefinition(template: CfnTemplateJson, opts: ExtractOptions = {}): AslDefinition {
  return resolvedStateMachine(template, opts).definition;
}

function resolvedStateMachine(template: CfnTemplateJson, opts: ExtractOptions) {
  const env = templateEnv(template, opts);
  const logicalId = pickStateMachine(env.resources, opts.stateMachineLogicalId);
  const props = env.resources[logicalId]?.Properties ?? {};
  env.where = `state machine ${logicalId}`;
  const definition = resolveDefinition(props, env);
  const name = typeof props.StateMachineName === 'string' ? props.StateMachineName : logicalId;
  return { env, logicalId, name, stateMachineArn: `arn:${env.partition}:states:${env.region}:${env.accountId}:stateMachine:${name}`, definition };
}

function templateEnv(template: CfnTemplateJson, opts: Omit<ExtractOptions, 'stateMachineLogicalId'>): Env {
  return {
    resources: template.Resources ?? {},
    parameters: template.Parameters ?? {},
    region: opts.region ?? 'us-east-1',
    accountId: opts.accountId ?? '000000000000',
    partition: opts.partition ?? 'aws',
    where: '',
    ...(opts.physical && { physical: opts.physical }),
  };
}

/**
 * Any value of the template (a policy document, a rule's target) with its intrinsics resolved the
 * way the state machine's definition is: the same local account, region and physical ids.
 */
export function resolveTemplateValue(value: unknown, template: CfnTemplateJson, opts: Omit<ExtractOptions, 'stateMachineLogicalId'> & { where: string }): unknown {
  return resolveValue(value, { ...templateEnv(template, opts), where: opts.where });
}

function pickStateMachine(resources: Record<string, CfnResource>, wanted?: string): string {
  const ids = agentStateMachineIds(resources);
  if (wanted !== undefined) {
    if (resources[wanted]?.Type === STATE_MACHINE) return wanted;
    if (!ids.includes(wanted)) throw new Error(`No ${STATE_MACHINE} named ${wanted} in the template (found: ${ids.join(', ') || 'none'})`);
    return wanted;
  }
  if (ids.length === 0) throw new Error(`The template has no ${STATE_MACHINE} resource`);
  if (ids.length > 1) throw new Error(`The template has ${ids.length} state machines (${ids.join(', ')}); pass stateMachineLogicalId`);
  return ids[0]!;
}

function resolveDefinition(props: Record<string, unknown>, env: Env): AslDefinition {
  let text: string;
  if (props.DefinitionString !== undefined) {
    const resolved = resolveValue(props.DefinitionString, env);
    if (typeof resolved !== 'string') throw new Error(`DefinitionString of ${env.where} did not resolve to a string`);
    text = resolved;
  } else if (props.Definition !== undefined) {
    text = JSON.stringify(resolveValue(props.Definition, env));
  } else {
    throw new Error(`${env.where} has neither DefinitionString nor Definition (DefinitionS3Location is not supported)`);
  }

  // DefinitionSubstitutions replace ${key} markers in the definition text, as CloudFormation does.
  const subs = props.DefinitionSubstitutions;
  if (isRecord(subs)) {
    for (const [key, raw] of Object.entries(subs)) {
      text = text.split('${' + key + '}').join(String(resolveValue(raw, env)));
    }
  }

  let definition: unknown;
  try {
    definition = JSON.parse(text);
  } catch (e) {
    throw new Error(`Definition of ${env.where} is not valid JSON: ${(e as Error).message}`);
  }
  if (!isRecord(definition) || typeof definition.StartAt !== 'string' || !isRecord(definition.States)) {
    throw new Error(`Definition of ${env.where} has no StartAt/States`);
  }
  return definition as AslDefinition;
}

// ---- intrinsics -------------------------------------------------------------------------------

/** Resolves CloudFormation intrinsics to local constants, recursively. */
function resolveValue(value: unknown, env: Env): unknown {
  if (Array.isArray(value)) return value.map((v) => resolveValue(v, env));
  if (!isRecord(value)) return value;
  const keys = Object.keys(value);
  const only = keys.length === 1 ? keys[0]! : undefined;
  if (only === 'Ref' || only?.startsWith('Fn::')) return resolveIntrinsic(only, value[only], env);
  return Object.fromEntries(keys.map((k) => [k, resolveValue(value[k], env)]));
}

function resolveIntrinsic(fn: string, arg: unknown, env: Env): unknown {
  switch (fn) {
    case 'Ref':
      if (typeof arg !== 'string') throw new Error(`Ref with a non-string argument in ${env.where}`);
      return resolveRef(arg, env);
    case 'Fn::GetAtt': {
      const [id, attr] = typeof arg === 'string' ? splitOnce(arg, '.') : (resolveValue(arg, env) as unknown[]);
      if (typeof id !== 'string' || typeof attr !== 'string') throw new Error(`Malformed Fn::GetAtt in ${env.where}`);
      return resolveGetAtt(id, attr, env);
    }
    case 'Fn::Join': {
      const [sep, parts] = arg as [unknown, unknown];
      const list = resolveValue(parts, env);
      if (typeof sep !== 'string' || !Array.isArray(list)) throw new Error(`Malformed Fn::Join in ${env.where}`);
      return list.map((p) => scalarString(p, 'Fn::Join', env)).join(sep);
    }
    case 'Fn::Sub': {
      const [template, vars] = typeof arg === 'string' ? [arg, {}] : (arg as [unknown, unknown]);
      if (typeof template !== 'string' || !isRecord(vars)) throw new Error(`Malformed Fn::Sub in ${env.where}`);
      return template.replace(/\$\{([^}!][^}]*)\}/g, (_, name: string) => {
        if (name in vars) return scalarString(resolveValue(vars[name], env), 'Fn::Sub', env);
        const [id, attr] = splitOnce(name, '.');
        return scalarString(attr === undefined ? resolveRef(id!, env) : resolveGetAtt(id!, attr, env), 'Fn::Sub', env);
      });
    }
    case 'Fn::Select': {
      const [index, list] = arg as [unknown, unknown];
      const items = resolveValue(list, env);
      const i = Number(resolveValue(index, env));
      if (!Array.isArray(items) || !(i in items)) throw new Error(`Malformed Fn::Select in ${env.where}`);
      return items[i];
    }
    case 'Fn::Split': {
      // What CDK writes to take a name out of an ARN (its Distributed Map policy: Fn::Select over this).
      const [sep, source] = arg as [unknown, unknown];
      const text = resolveValue(source, env);
      if (typeof sep !== 'string' || typeof text !== 'string') throw new Error(`Malformed Fn::Split in ${env.where}`);
      return text.split(sep);
    }
    default:
      throw new Error(`Unsupported intrinsic ${fn} in ${env.where}`);
  }
}

function resolveRef(name: string, env: Env): unknown {
  switch (name) {
    case 'AWS::Partition':
      return env.partition;
    case 'AWS::Region':
      return env.region;
    case 'AWS::AccountId':
      return env.accountId;
    case 'AWS::URLSuffix':
      return 'amazonaws.com';
    case 'AWS::StackName':
      return 'local';
    case 'AWS::StackId':
      return `arn:${env.partition}:cloudformation:${env.region}:${env.accountId}:stack/local/local`;
  }
  if (name.startsWith('AWS::')) throw new Error(`Unsupported pseudo parameter ${name} in ${env.where}`);
  // Ref of a resource is its physical id; locally the logical id stands in (for a Lambda, its name).
  const resource = env.resources[name];
  if (resource) return env.physical?.ref?.(name, resource) ?? name;
  const parameter = env.parameters[name];
  if (parameter) {
    if (parameter.Default === undefined) throw new Error(`Template parameter ${name} (used in ${env.where}) has no Default`);
    return parameter.Default;
  }
  throw new Error(`Ref to unknown resource or parameter ${name} in ${env.where}`);
}

function resolveGetAtt(id: string, attr: string, env: Env): string {
  const resource = env.resources[id];
  if (!resource) throw new Error(`Fn::GetAtt of unknown resource ${id} in ${env.where}`);
  // A state machine's Name is the last part of its ARN (CloudFormation: "Returns the name of the state machine").
  if (attr === 'Name' && resource.Type === STATE_MACHINE) {
    const named = resource.Properties?.['StateMachineName'];
    if (typeof named === 'string') return named;
    const arn = env.physical?.arn?.(id, resource);
    if (arn !== undefined) return arn.slice(arn.lastIndexOf(':') + 1);
  }
  if (attr !== 'Arn') return `${id}.${attr}`;
  const physical = env.physical?.arn?.(id, resource);
  if (physical !== undefined) return physical;
  if (resource.Type === LAMBDA_FUNCTION) return lambdaArn(id, env);
  const service = resource.Type.split('::')[1]?.toLowerCase() ?? 'unknown';
  return `arn:${env.partition}:${service}:${env.region}:${env.accountId}:${id}`;
}

function lambdaArn(logicalId: string, env: Pick<Env, 'partition' | 'region' | 'accountId'>): string {
  return `arn:${env.partition}:lambda:${env.region}:${env.accountId}:function:${logicalId}`;
}

// ---- tasks ------------------------------------------------------------------------------------

/** Calls visit for every state, including those nested in Parallel branches and Map processors. */
export function walkStates(definition: AslDefinition, visit: (name: string, state: AslState) => void): void {
  for (const [name, state] of Object.entries(definition.States)) {
    visit(name, state);
    for (const branch of state.Branches ?? []) walkStates(branch, visit);
    const processor = state.ItemProcessor ?? state.Iterator;
    if (processor) walkStates(processor, visit);
  }
}

function mapTasks(definition: AslDefinition, env: Env): Record<string, TaskInfo> {
  const functionsByName = new Map<string, string>();
  for (const [id, resource] of Object.entries(env.resources)) {
    if (resource.Type !== LAMBDA_FUNCTION) continue;
    functionsByName.set(id, id);
    const explicit = resource.Properties?.FunctionName;
    if (typeof explicit === 'string') functionsByName.set(explicit, id);
  }
  // A Task that invokes a published version (`currentVersion`: what each deploy pins) runs that
  // version's function: `Ref` of the version resolves to its logical id, mapped to the function's.
  for (const [id, resource] of Object.entries(env.resources)) {
    if (resource.Type !== 'AWS::Lambda::Version') continue;
    const target = resource.Properties?.FunctionName as { Ref?: unknown } | string | undefined;
    const name = typeof target === 'string' ? target : typeof target?.Ref === 'string' ? target.Ref : undefined;
    const functionId = name === undefined ? undefined : functionsByName.get(functionNameOf(name));
    if (functionId) functionsByName.set(id, functionId);
  }

  const tasks: Record<string, TaskInfo> = {};
  const seen = new Set<string>();
  walkStates(definition, (name, state) => {
    // The library keys Task overrides by state name, so nested names must be unique too.
    if (seen.has(name)) throw new Error(`State name ${name} is used twice in ${env.where}`);
    seen.add(name);
    if (state.Type !== 'Task') return;

    const resource = state.Resource ?? '';
    const match = LAMBDA_INVOKE.exec(resource);
    if (!match) {
      throw new Error(
        `Task ${name} uses resource ${resource || '(none)'}; only arn:aws:states:::lambda:invoke and lambda:invoke.waitForTaskToken run locally`,
      );
    }
    const params = state.Parameters ?? {};
    if (typeof params.FunctionName !== 'string') {
      throw new Error(`Task ${name} has no literal FunctionName parameter (a dynamic FunctionName.$ cannot be mapped)`);
    }
    const functionLogicalId = functionsByName.get(functionNameOf(params.FunctionName));
    if (!functionLogicalId) throw new Error(`Task ${name} invokes ${params.FunctionName}, which is not a Lambda function of the template`);

    const variables = (env.resources[functionLogicalId]?.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables;
    const step = resolveValue(variables?.SAVEPOINT_STEP, { ...env, where: `function ${functionLogicalId}` });
    if (typeof step !== 'string' || step === '') {
      throw new Error(`Lambda function ${functionLogicalId} (Task ${name}) has no Environment.Variables.SAVEPOINT_STEP`);
    }

    tasks[name] = {
      step,
      functionLogicalId,
      waitForTaskToken: match[1] !== undefined,
      ...(state.TimeoutSeconds !== undefined && { timeoutSeconds: state.TimeoutSeconds }),
      ...(state.HeartbeatSeconds !== undefined && { heartbeatSeconds: state.HeartbeatSeconds }),
    };
  });
  return tasks;
}

/** `arn:…:function:NAME[:qualifier]`, `NAME:qualifier` or `NAME` → NAME. */
function functionNameOf(functionName: string): string {
  const arn = /^arn:[^:]+:lambda:[^:]*:[^:]*:function:([^:]+)/.exec(functionName);
  if (arn) return arn[1]!;
  return functionName.split(':')[0]!;
}

// ---- helpers ----------------------------------------------------------------------------------

function splitOnce(text: string, sep: string): [string, string | undefined] {
  const i = text.indexOf(sep);
  return i < 0 ? [text, undefined] : [text.slice(0, i), text.slice(i + 1)];
}

function scalarString(value: unknown, fn: string, env: Env): string {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new Error(`${fn} in ${env.where} produced a non-scalar part: ${JSON.stringify(value)}`);
}
