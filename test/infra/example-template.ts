import { Template } from 'aws-cdk-lib/assertions';
import { exampleStack } from '../../infra/example.js';
import { assertionApp } from '../support/assertion-app.js';

export { assertionApp } from '../support/assertion-app.js';

let synthesized: Record<string, unknown> | undefined;

/**
 * The example app's stack with its defaults, synthesized once per test worker (seconds of CPU each
 * time) for every infra file that asserts on it. Each call gets its own copy: no file can change
 * what another one sees.
 */
export function exampleTemplate(): Template {
  synthesized ??= Template.fromStack(exampleStack(assertionApp())).toJSON();
  return Template.fromJSON(structuredClone(synthesized));
}

/**
 * A `SavepointStack` named `id` with the agents `addAgents` adds, synthesized and deployed as the
 * twin deploys it: its template, its roles (local/aws/iam/roles.ts) and its ledger table's ARN —
 * what the IAM tests of a multi-agent stack decide requests against.
 */
export async function deployedStack(id: string, addAgents: (stack: import('../../infra/stack.js').SavepointStack) => void) {
  const [{ SavepointStack }, { deploy, physicalNames }, { ledgerTableArn }, { stackRoles }] = await Promise.all([
    import('../../infra/stack.js'),
    import('../../local/aws/iam/deployment.js'),
    import('../../local/aws/iam/dynamodb.js'),
    import('../../local/aws/iam/roles.js'),
  ]);
  const app = assertionApp();
  const stack = new SavepointStack(app, id);
  addAgents(stack);
  const template = app.synth().getStackArtifact(stack.artifactId).template as import('../../local/template/asl.js').CfnTemplateJson;
  const deployment = deploy(template);
  return { template, roles: stackRoles(template, deployment).roles, table: ledgerTableArn(template, physicalNames(template, deployment))! };
}
