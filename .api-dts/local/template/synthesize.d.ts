import { type AgentDefinition } from '../../lambdas/define.js';
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
export type CfnTemplate = {
    Resources: Record<string, {
        Type: string;
        Properties?: Record<string, unknown>;
    }>;
};
/**
 * The props of an app synthesized in-process, here and by the template tests: no asset bundling
 * (the local engine calls the handlers' source directly) and no CDK built-in CloudFormation
 * validation, whose engine costs most of a synthesis. That validation is `cdk synth`'s job, and
 * test/infra/nag.test.ts's, with its findings as errors. Props, not an App: the CDK is imported
 * only when something is synthesized.
 */
export declare function inProcessAppProps(): {
    context: Record<string, unknown>;
    builtinCloudFormationValidation: false;
};
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
}
/**
 * The `toolTimeout` the local stack deploys an agent with: what its deployer sets on AWS, the
 * longest of its tools' timeouts (`maxToolTimeoutMs`, infra/durable-agent.ts), where that is
 * longer than the construct's default; the default otherwise (undefined), so that most agents run
 * the one template (the shipped one, in an installed package). Then no tool outlasts its CallTool
 * function, as none may on AWS (`assertToolsFitTimeout`).
 */
export declare function localToolTimeoutMs(agent: Pick<AgentDefinition, 'tools'>): number | undefined;
/** What a synthesized template is told apart by in the caches (this process's, template-cache.ts's files). */
export declare function templateVariant(options: TemplateOptions): string;
/**
 * The stack of one agent, as `cdk deploy` would ship it: the generic loop, named for the agent.
 * The definition is the same for every agent; only the state machine's name differs.
 */
export declare function synthesizeTemplate(agentName?: string, options?: TemplateOptions): Promise<CfnTemplate>;
/** The ledger's CreateTable input, read from the template's table resource (keys and indexes alike). */
export declare function ledgerTableFromTemplate(template: CfnTemplate, tableName: string): CreateTableCommandInput;
/**
 * The agent name the package's build synthesizes its template for (bin/build.js). An installed
 * savepoint runs that template, renamed for the agent — the definition, roles and policies are
 * the same for every agent (test/readme/shipped-template.test.ts) — so a local run or a test
 * synthesizes nothing and needs no CDK (the optional peers `aws-cdk-lib`, `constructs`).
 */
export declare const TEMPLATE_AGENT = "savepoint-template-agent";
/** dist/template/, beside dist/local/ in an installed package (absent in a checkout): untraced, and traced. */
export declare const SHIPPED_TEMPLATES: {
    readonly plain: 'agent.template.json';
    readonly traced: 'agent.traced.template.json';
};
/**
 * The template synthesized for TEMPLATE_AGENT (its JSON text), renamed for `agentName`. The renamed
 * definition is another definition, so its identity (StartRun's `definition.hash`) is computed anew.
 */
export declare function renamedTemplate(templateText: string, agentName: string): CfnTemplate;
