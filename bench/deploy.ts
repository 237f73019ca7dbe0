/**
 * `npm run bench -- --deploy [--agents <n>] [--json]`: what each agent added to a stack costs in
 * CloudFormation resources and in dollars a month while idle (issue 34), and how long the app of
 * `--agents` agents takes to synthesize. Apps of the example agent are synthesized through the
 * public construct (`savepoint/cdk`), bundling off: 1 and 3 agents in one stack, 1 and n agents
 * in nested stacks of `--per-nested` agents (`agentsInNestedStacks`). The idle bill is bench/aws-cost.ts `idleBill`: the template's alarms,
 * dashboards, keys and secrets, the invocations its schedules make, and the custom metrics its
 * scheduled functions publish while idle — read from the emitter (lambdas/adapters/step-telemetry.ts
 * `resultMetrics`) on what each scheduled step returns when it runs on an empty ledger, one metric
 * per name and `service` dimension (the function's POWERTOOLS_SERVICE_NAME), not from the template.
 */
import { NestedStack, type CfnResource } from 'aws-cdk-lib';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SavepointStack } from '../cdk/index.js';
import { EXAMPLE_AGENTS } from '../infra/example.js';
import { EmbeddedLedger } from '../lambdas/ledger/embedded-ledger.js';
import { resultMetrics } from '../lambdas/adapters/step-telemetry.js';
import { Steps, type StepName } from '../lambdas/shared/steps.js';
import { createExpireApprovals } from '../lambdas/steps/expire-approvals.js';
import { createPruneVersions } from '../lambdas/steps/prune-versions.js';
import { createSweep } from '../lambdas/steps/sweep.js';
import { synthesizedInProcess } from '../local/template/synthesize.js';
import { idleBill, type IdleBill } from './aws-cost.js';

type Resource = { Type: string; Properties?: Record<string, any> };
export interface FleetTemplates {
  readonly parent: { Resources: Record<string, Resource>; Outputs?: Record<string, unknown>; Parameters?: Record<string, unknown> };
  readonly nested: { Resources: Record<string, Resource>; Outputs?: Record<string, { Value: unknown }>; Parameters?: Record<string, unknown> }[];
  /** Each nested stack's logical id in the parent (`AWS::CloudFormation::Stack`), in the order of `nested`. */
  readonly nestedIds: string[];
  /** Every resource of every template: what one operation creates on a first deploy. */
  readonly resources: number;
  readonly ms: number;
}

/** The app of `agents` example agents through `savepoint/cdk`, in one stack or in nested stacks (`agentsInNestedStacks`). */
export async function synthesizeFleet(agents: number, nested: boolean | number): Promise<FleetTemplates> {
  const started = performance.now();
  const { App } = await import('aws-cdk-lib');
  type Nested = FleetTemplates['nested'][number];
  // The assembly in a directory of its own, removed once its templates are read (not a `cdk.out…` left in the OS's temp).
  return synthesizedInProcess(App, (app) => {
    const stack = new SavepointStack(app, 'Fleet', { agentsInNestedStacks: nested });
    for (let index = 0; index < agents; index++) stack.addAgent(`Agent${index}`, { agentName: `agent-${index}`, entry: EXAMPLE_AGENTS.refundReconciler });
    const assembly = app.synth();
    const parent = assembly.getStackArtifact(stack.artifactId).template as FleetTemplates['parent'];
    const children = stack.node.findAll().filter((node): node is NestedStack => node instanceof NestedStack);
    const nestedTemplates = children.map((child) => JSON.parse(readFileSync(join(assembly.directory, child.templateFile), 'utf8')) as Nested);
    const nestedIds = children.map((child) => stack.getLogicalId(child.nestedStackResource as CfnResource));
    const resources = [parent, ...nestedTemplates].reduce((sum, template) => sum + Object.keys(template.Resources).length, 0);
    return { parent, nested: nestedTemplates, nestedIds, resources, ms: performance.now() - started };
  });
}

/** What a scheduled step returns when it runs with nothing to do (an empty ledger, no versions). */
async function idleOutput(step: StepName): Promise<unknown> {
  const ledger = EmbeddedLedger.open();
  const clock = { now: () => new Date('2026-12-01T00:00:00.000Z') };
  const nothing = async () => {
    throw new Error('an idle step calls nothing');
  };
  switch (step) {
    case Steps.ExpireApprovals:
      return createExpireApprovals({ ledger, callbacks: { succeed: nothing, fail: nothing }, clock })();
    case Steps.Sweep:
      return createSweep({ ledger, executions: { describe: async () => undefined }, starter: { start: nothing }, clock })();
    case Steps.PruneVersions:
      return createPruneVersions({ versions: { list: async () => [], aliased: async () => new Set(), activity: nothing, delete: nothing, definition: nothing }, clock })();
    default:
      throw new Error(`bench/deploy.ts: no idle run of the scheduled step ${step}: add one`);
  }
}

/** The custom metrics a deployment's scheduled functions publish while idle: distinct (name, service) pairs. */
export async function idleMetrics(templates: FleetTemplates): Promise<string[]> {
  const resources = [templates.parent, ...templates.nested].flatMap((template) => Object.entries(template.Resources));
  const functions = new Map(resources.filter(([, resource]) => resource.Type === 'AWS::Lambda::Function'));
  const metrics = new Set<string>();
  for (const [, rule] of resources.filter(([, resource]) => resource.Type === 'AWS::Events::Rule' && resource.Properties?.['ScheduleExpression'])) {
    for (const target of (rule.Properties!['Targets'] ?? []) as { Arn?: { 'Fn::GetAtt'?: [string, string] } }[]) {
      const variables = functions.get(target.Arn?.['Fn::GetAtt']?.[0] ?? '')?.Properties?.['Environment']?.Variables as Record<string, unknown> | undefined;
      if (!variables) continue;
      const step = variables['SAVEPOINT_STEP'] as StepName;
      const service = String(variables['POWERTOOLS_SERVICE_NAME']);
      for (const point of resultMetrics(step, await idleOutput(step))) metrics.add(`${point.name} service=${service}`);
    }
  }
  return [...metrics].sort();
}

export interface DeployReport {
  flat: { one: number; three: number; perAgent: number; idlePerAgent: number; idleOne: IdleBill };
  nested: { agents: number; perNested: number; one: number; many: number; perAgent: number; idlePerAgent: number; operation: number; parentOutputs: number };
  synthMs: number;
  idleMetrics: string[];
}

export async function deployBenchmark(argv: readonly string[]): Promise<DeployReport> {
  const { values } = parseArgs({ args: [...argv], options: { deploy: { type: 'boolean' }, agents: { type: 'string', default: '20' }, 'per-nested': { type: 'string', default: '4' }, json: { type: 'boolean' } }, strict: true });
  const agents = Number(values.agents);
  if (!Number.isInteger(agents) || agents < 2) throw new Error(`--agents must be a whole number ≥ 2, got ${values.agents}`);
  const perNested = Number(values['per-nested']);
  const bill = async (fleet: FleetTemplates) => {
    const metrics = await idleMetrics(fleet);
    return { bill: idleBill([fleet.parent, ...fleet.nested], metrics.length), metrics };
  };
  const [one, three, oneNested] = [await synthesizeFleet(1, false), await synthesizeFleet(3, false), await synthesizeFleet(1, perNested)];
  const many = await synthesizeFleet(agents, perNested);
  const [billOne, billThree, billOneNested, billMany] = [await bill(one), await bill(three), await bill(oneNested), await bill(many)];
  const report: DeployReport = {
    flat: { one: one.resources, three: three.resources, perAgent: (three.resources - one.resources) / 2, idlePerAgent: (billThree.bill.dollars - billOne.bill.dollars) / 2, idleOne: billOne.bill },
    nested: {
      agents,
      perNested,
      one: oneNested.resources,
      many: many.resources,
      perAgent: (many.resources - oneNested.resources) / (agents - 1),
      idlePerAgent: (billMany.bill.dollars - billOneNested.bill.dollars) / (agents - 1),
      operation: many.resources,
      parentOutputs: Object.keys(many.parent.Outputs ?? {}).length,
    },
    synthMs: many.ms,
    idleMetrics: billMany.metrics,
  };
  if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
  else {
    const dollars = (value: number) => `$${value.toFixed(2)}`;
    process.stdout.write(
      [
        `one stack: 1 agent ${report.flat.one} resources, 3 agents ${report.flat.three}: ${report.flat.perAgent} resources and ${dollars(report.flat.idlePerAgent)}/month idle per added agent`,
        `  idle, 1 agent: ${dollars(report.flat.idleOne.dollars)}/month (${report.flat.idleOne.alarmMetrics} alarm metrics, ${report.flat.idleOne.dashboards} dashboard, ${report.flat.idleOne.kmsKeys} KMS keys, ${report.flat.idleOne.secrets} secrets, ${report.flat.idleOne.customMetrics} custom metrics, ${Math.round(report.flat.idleOne.scheduledInvocations)} scheduled invocations)`,
        `nested stacks of ${perNested} agents: 1 agent ${report.nested.one} resources, ${agents} agents ${report.nested.many} (one operation; parent ${report.nested.parentOutputs} outputs): ${report.nested.perAgent.toFixed(1)} resources and ${dollars(report.nested.idlePerAgent)}/month idle per added agent`,
        `idle custom metrics (from the emitter): ${report.idleMetrics.join(', ') || 'none'}`,
        `synthesis of ${agents} agents: ${Math.round(report.synthMs)} ms`,
      ].join('\n') + '\n',
    );
  }
  return report;
}

/**
 * One agent of a fleet as the twin deploys it (it runs one agent's template): the parent's
 * resources and those of the nested stack holding the agent, each of the nested template's
 * parameters replaced by what the parent passes it (the `AWS::CloudFormation::Stack` resource's
 * `Parameters`), the other agents' resources and the nested stacks themselves left out. Every
 * resource kept is the deployed one, roles and policies included: what the agent's functions may
 * do is what they may do on AWS.
 */
export function agentView(fleet: FleetTemplates, agentId: string): { Resources: Record<string, Resource>; Parameters?: Record<string, unknown> } {
  // The fleet's agents are `Agent<i>` (synthesizeFleet): a resource's logical id starts with its agent's.
  const ownerOf = (id: string) => /^Agent\d+/.exec(id)?.[0];
  const ours = (id: string) => ownerOf(id) === undefined || ownerOf(id) === agentId;
  const index = fleet.nested.findIndex((template) => Object.keys(template.Resources).some((id) => ownerOf(id) === agentId));
  const parameters = (index === -1 ? {} : (fleet.parent.Resources[fleet.nestedIds[index]!]!.Properties?.['Parameters'] ?? {})) as Record<string, unknown>;
  // In the nested template: a parameter is what the parent passes. In the parent: an output of the
  // agent's nested stack is its value there; another nested stack's (another agent's role, named in
  // a shared key's or secret's policy) is that principal's ARN, of a role this view does not hold.
  const substitute = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(substitute);
    if (typeof value !== 'object' || value === null) return value;
    const ref = (value as { Ref?: unknown }).Ref;
    if (typeof ref === 'string' && ref in parameters) return parameters[ref];
    const getAtt = (value as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
    if (getAtt && fleet.nestedIds.includes(getAtt[0]) && getAtt[1].startsWith('Outputs.')) {
      const output = getAtt[1].slice('Outputs.'.length);
      const at = fleet.nestedIds.indexOf(getAtt[0]);
      return at === index ? substitute(fleet.nested[index]!.Outputs![output]!.Value) : `arn:aws:iam::000000000000:role/${getAtt[0]}-${output}`;
    }
    // Another agent's resource (its role, in a policy that names every agent's): a principal outside this view.
    const named = getAtt?.[0] ?? (typeof ref === 'string' ? ref : undefined);
    if (named !== undefined && !ours(named)) return `arn:aws:iam::000000000000:role/${named}`;

    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, substitute(inner)]));
  };
  const kept = (template: FleetTemplates['parent']) => Object.entries(template.Resources).filter(([id, resource]) => resource.Type !== 'AWS::CloudFormation::Stack' && ours(id));
  const resources = Object.fromEntries([...kept(fleet.parent), ...(index === -1 ? [] : kept(fleet.nested[index]!))].map(([id, resource]) => [id, substitute(resource) as Resource] as const));
  return { Resources: resources, ...(fleet.parent.Parameters && { Parameters: fleet.parent.Parameters }) };
}
