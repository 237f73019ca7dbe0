import { createHash } from 'node:crypto';
import { LOCAL_MANIFEST_BUCKET } from '../../lambdas/runs/batch.js';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { App as CdkApp } from 'aws-cdk-lib';
import { missingPeer } from '../packages/optional-peers.js';
import { CHILDREN_BESIDE_CONTEXT } from '../../infra/children-beside.js';
import { fileURLToPath } from 'node:url';
import { DEFAULT_TOOL_TIMEOUT_MS, maxToolTimeoutMs, stableJson, type AgentDefinition } from '../../lambdas/define.js';
import type { PrincipalDirectory } from '../../lambdas/approvals/people.js';
import { reidentified } from '../../lambdas/shared/definition-identity.js';
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

export type CfnTemplate = { Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }> };

/**
 * Synthesizes the CDK stack in-process, without bundling (the local engine calls the handlers'
 * source directly): the same definition `cdk deploy` ships. The CDK is imported only here, when a
 * template is synthesized: a process given a template (`--template`) starts without it.
 */
const synthesized = new Map<string, CfnTemplate>();

/**
 * The props of an app synthesized in-process, here and by the template tests: no asset bundling
 * (the local engine calls the handlers' source directly) and no CDK built-in CloudFormation
 * validation, whose engine costs most of a synthesis. That validation is `cdk synth`'s job, and
 * test/infra/nag.test.ts's, with its findings as errors. Nor the stack traces the CDK records for
 * every construct it makes and every annotation (the cloud assembly's metadata, never the
 * template, which is all that is read of these apps): each one is an Error's stack, formatted, about
 * a tenth of a synthesis' CPU (208 against 184 ms for an agent's stack; the same template). Props,
 * not an App: the CDK is imported only when something is synthesized.
 */
export function inProcessAppProps(): { context: Record<string, unknown>; builtinCloudFormationValidation: false } {
  return { context: { 'aws:cdk:bundling-stacks': [], 'aws:cdk:disable-creation-stack-traces': true, 'aws:cdk:disable-stack-trace': true }, builtinCloudFormationValidation: false };
}

/**
 * What `read` takes from an app of `App` (aws-cdk-lib's, imported by the caller) made with
 * inProcessAppProps, its cloud assembly written to a directory of its own and removed once `read`
 * returns: the CDK's default, a new directory under the OS's temp (`cdk.out…`) per synthesis, is
 * never removed. `read` synthesizes the app and reads what it needs from the assembly before it goes.
 */
export function synthesizedInProcess<T>(App: typeof CdkApp, read: (app: CdkApp) => T): T {
  const outdir = mkdtempSync(join(tmpdir(), 'savepoint-synth-'));
  try {
    return read(new App({ ...inProcessAppProps(), outdir }));
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

export interface TemplateOptions {
  /**
   * The stack with the IAM policies of a traced deployment (`DurableAgent`'s `tracing` prop): what
   * the local engine runs when tracing is configured (OTEL_* variables), so that a traced run's end
   * reads its conversation through the grant AWS gives it (`traceRunEnd`) and nothing else.
   * @default false
   */
  readonly traced?: boolean;
  /**
   * The stack's `toolTimeout` in ms (`DurableAgent`'s prop), which CallTool's function timeout,
   * its Task's and a claim's lease derive from: `localToolTimeoutMs(agent)` for the local stack.
   * @default the construct's default (DEFAULT_TOOL_TIMEOUT_MS)
   */
  readonly toolTimeoutMs?: number;
  /**
   * The IAM principals of the deployment's approvers and starters (`DurableAgent`'s
   * `approvals.approverPrincipals` / `starterPrincipals`), which its approval API's resource
   * policy names: what the twin holds a local API caller that plays an IAM principal to
   * (local/aws/iam/api-gateway.ts). @default none
   */
  readonly people?: { readonly approverPrincipals?: PrincipalDirectory; readonly starterPrincipals?: PrincipalDirectory };
  /** The agents the agent runs as tools (`DurableAgent`'s `children`): `childAgents(agent)`. @default none */
  readonly children?: readonly string[];
}

/** The agents `agent` runs as tools (`defineAgentTool`), by name: what its deployment names as its `children`. */
export function childAgents(agent: Pick<AgentDefinition, 'tools'>): string[] | undefined {
  const names = [...new Set(agent.tools.flatMap((tool) => (tool.child ? [tool.child.agent.name] : [])))].sort();
  return names.length > 0 ? names : undefined;
}

/**
 * The `toolTimeout` the local stack deploys an agent with: what its deployer sets on AWS, the
 * longest of its tools' timeouts (`maxToolTimeoutMs`, infra/durable-agent.ts), where that is
 * longer than the construct's default; the default otherwise (undefined), so that most agents run
 * the one template (the shipped one, in an installed package). Then no tool outlasts its CallTool
 * function, as none may on AWS (`assertToolsFitTimeout`).
 */
export function localToolTimeoutMs(agent: Pick<AgentDefinition, 'tools'>): number | undefined {
  if (agent.tools.length === 0) return undefined;
  const longest = maxToolTimeoutMs(agent);
  return longest > DEFAULT_TOOL_TIMEOUT_MS ? longest : undefined;
}

/** What a synthesized template is told apart by in the caches (this process's, template-cache.ts's files). */
export function templateVariant(options: TemplateOptions): string {
  const people = options.people && createHash('sha256').update(stableJson(options.people)).digest('hex').slice(0, 12);
  return `${options.traced ? '-traced' : ''}${options.toolTimeoutMs === undefined ? '' : `-tools${options.toolTimeoutMs}`}${people ? `-people${people}` : ''}${options.children?.length ? `-children-${options.children.join('-')}` : ''}`;
}

/**
 * The `tracing` prop a traced local template takes its policies from. Only the policies: the
 * variables the prop sets (not read locally, where each function exports as the process's own
 * OTEL_* variables say) would change every function version's logical id, and with them the
 * definition's identity (StartRun's `definition.hash`) — a run started with tracing off would be
 * refused on resume with it on, while locally tracing is the process's configuration, not a deploy.
 */
const LOCAL_TRACING = { endpoint: 'http://localhost:4318' } as const;

/**
 * The agent entry a local template names, never read: a path of this copy, not one relative to
 * the working directory, whose absolute form is in each step function's asset hash and so in its
 * version's logical id. Relative, a command run from another directory synthesized other version
 * ids for the same sources.
 */
const PLACEHOLDER_ENTRY = fileURLToPath(new URL('../../local-agent.ts', import.meta.url));

/**
 * The stack of one agent, as `cdk deploy` would ship it: the generic loop, named for the agent.
 * The definition is the same for every agent; only the state machine's name differs.
 */
export async function synthesizeTemplate(agentName = 'agent', options: TemplateOptions = {}): Promise<CfnTemplate> {
  const traced = options.traced === true;
  const { toolTimeoutMs } = options;
  const key = `${agentName}${templateVariant(options)}`;
  // Synthesis takes seconds and the stack is the same every time within a process.
  const cached = synthesized.get(key);
  if (cached) return structuredClone(cached);
  // An installed package runs the template its build synthesized from the same constructs.
  // It is synthesized for the default toolTimeout: another one is synthesized here.
  const shipped = toolTimeoutMs === undefined && options.people === undefined && !options.children?.length ? shippedTemplate(agentName, traced) : undefined;
  if (shipped) return shipped;
  let cdk: [typeof import('aws-cdk-lib'), typeof import('../../infra/stack.js'), typeof import('../../infra/stack-api.js')];
  try {
    cdk = await Promise.all([import('aws-cdk-lib'), import('../../infra/stack.js'), import('../../infra/stack-api.js')]);
  } catch (error) {
    if (!isMissingCdk(error)) throw error;
    const why = toolTimeoutMs === undefined ? '' : ` (its tools need a toolTimeout of ${toolTimeoutMs} ms; the shipped template has the default ${DEFAULT_TOOL_TIMEOUT_MS} ms)`;
    throw new Error(`the local engine synthesizes the stack with the CDK${why}: npm install -D aws-cdk-lib constructs`, { cause: error });
  }
  const [{ App, Duration, aws_iam: iam, aws_s3: s3 }, { SavepointStack }, { StackApi }] = cdk;
  const synth = (tracing?: typeof LOCAL_TRACING) =>
    synthesizedInProcess(App, (app) => {
      // Its children (`children`) run beside it, each on an engine of its own: not in this stack.
      if (options.children?.length) app.node.setContext(CHILDREN_BESIDE_CONTEXT, true);
      const stack = new SavepointStack(app, 'Savepoint');
      // Bundling is off: the entry is never read (the local engine calls the steps in-process).
      stack.addAgent('Agent', { agentName, entry: PLACEHOLDER_ENTRY, ...(tracing && { tracing }), ...(toolTimeoutMs !== undefined && { toolTimeout: Duration.millis(toolTimeoutMs) }), ...(options.people && { approvals: options.people }), ...(options.children?.length && { children: options.children }) });
      // The twin's batches read their manifests from its bucket (local/template/batch-synth.ts), and so does
      // the runs function, to list a manifest batch's runs: the grant a deployment's `batches.manifestBuckets` gives it (infra/durable-agent.ts).
      const api = stack.node.findAll().find((construct): construct is InstanceType<typeof StackApi> => construct instanceof StackApi);
      api?.runsApi.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [s3.Bucket.fromBucketName(stack, 'LocalManifests', LOCAL_MANIFEST_BUCKET).arnForObjects('*')] }));
      return app.synth().getStackArtifact(stack.artifactId).template as CfnTemplate;
    });
  const template = synth();
  if (traced) {
    // A traced policy that names a function version (the state machine role's) names the traced
    // versions: it stays the plain one, which the tracing prop grants nothing in.
    const policies = synth(LOCAL_TRACING).Resources;
    for (const [id, resource] of Object.entries(template.Resources)) {
      const policy = policies[id];
      if (resource.Type === 'AWS::IAM::Policy' && policy && referencedIds(policy.Properties).every((ref) => ref in template.Resources)) resource.Properties = policy.Properties;
      // A role's own (inline) policies (infra/inline-policy-role.ts), the rest of the role as it is.
      const inline = policy?.Properties?.['Policies'];
      if (resource.Type === 'AWS::IAM::Role' && inline && referencedIds(inline).every((ref) => ref in template.Resources)) resource.Properties = { ...resource.Properties, Policies: inline };
    }
  }
  synthesized.set(key, template);
  return structuredClone(template);
}

/** The logical ids a template value refers to (`Ref`, `Fn::GetAtt`), pseudo parameters aside. */
function referencedIds(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(referencedIds);
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) => {
    if (key === 'Ref' && typeof inner === 'string') return inner.startsWith('AWS::') ? [] : [inner];
    if (key === 'Fn::GetAtt' && Array.isArray(inner) && typeof inner[0] === 'string') return [inner[0]];
    return referencedIds(inner);
  });
}

/** The ledger's CreateTable input, read from the template's table resource (keys and indexes alike). */
export function ledgerTableFromTemplate(template: CfnTemplate, tableName: string): CreateTableCommandInput {
  const tables = Object.entries(template.Resources).filter(
    ([, resource]) => resource.Type === 'AWS::DynamoDB::GlobalTable' || resource.Type === 'AWS::DynamoDB::Table',
  );
  if (tables.length !== 1) throw new Error(`expected one DynamoDB table in the template, found ${tables.length}`);
  const properties = tables[0]![1].Properties as Pick<CreateTableCommandInput, 'AttributeDefinitions' | 'KeySchema' | 'GlobalSecondaryIndexes'>;
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: properties.AttributeDefinitions,
    KeySchema: properties.KeySchema,
    GlobalSecondaryIndexes: properties.GlobalSecondaryIndexes,
  };
}

/**
 * The agent name the package's build synthesizes its template for (bin/build.js). An installed
 * savepoint runs that template, renamed for the agent — the definition, roles and policies are
 * the same for every agent (test/readme/shipped-template.test.ts) — so a local run or a test
 * synthesizes nothing and needs no CDK (the optional peers `aws-cdk-lib`, `constructs`).
 */
export const TEMPLATE_AGENT = 'savepoint-template-agent';

/** dist/template/, beside dist/local/ in an installed package (absent in a checkout): untraced, and traced. */
export const SHIPPED_TEMPLATES = { plain: 'agent.template.json', traced: 'agent.traced.template.json' } as const;
const shippedTemplateUrl = (traced: boolean) => new URL(`../../template/${SHIPPED_TEMPLATES[traced ? 'traced' : 'plain']}`, import.meta.url);

/**
 * The template synthesized for TEMPLATE_AGENT (its JSON text), renamed for `agentName`. The renamed
 * definition is another definition, so its identity (StartRun's `definition.hash`) is computed anew.
 */
export function renamedTemplate(templateText: string, agentName: string): CfnTemplate {
  const template = JSON.parse(templateText.replaceAll(TEMPLATE_AGENT, agentName)) as CfnTemplate;
  for (const resource of Object.values(template.Resources)) {
    const properties = resource.Properties as { DefinitionString?: unknown } | undefined;
    if (resource.Type === 'AWS::StepFunctions::StateMachine' && properties?.DefinitionString !== undefined) {
      properties.DefinitionString = reidentified(properties.DefinitionString);
    }
  }
  return template;
}

function shippedTemplate(agentName: string, traced: boolean): CfnTemplate | undefined {
  const file = shippedTemplateUrl(traced);
  if (agentName === TEMPLATE_AGENT || !existsSync(file)) return undefined;
  const template = renamedTemplate(readFileSync(file, 'utf8'), agentName);
  synthesized.set(`${agentName}${templateVariant({ traced })}`, template);
  return structuredClone(template);
}

/** Whether loading the CDK failed because it is not installed (local/runtime/optional-peers.ts). */
export function isMissingCdk(error: unknown): boolean {
  const peer = missingPeer(error);
  return peer === 'aws-cdk-lib' || peer === 'constructs';
}
