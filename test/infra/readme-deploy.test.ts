import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { SavepointStack } from '../../infra/stack.js';
import { assertionApp, exampleTemplate } from './example-template.js';
import { DOC_FILES } from '../readme/readme-text.js';

/**
 * Issue 20, item 9, and issue 39: the deploy commands of the README and the guides, as written,
 * against the Parameters of the app each deploys. CloudFormation refuses a deploy that names a
 * parameter the template does not declare, and one that leaves out a parameter without a default
 * ("Parameters" in the CloudFormation User Guide, https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/parameters-section-structure.html).
 *
 * A shell block that deploys this repository's example app says so in a comment naming
 * `infra/app.ts` (its parameters — PaymentsApiUrl, Approvers — are the example's own); every other
 * deploy command is a user's app, a `SavepointStack` of their agents, whose only parameter is
 * `ModelApiUrl` while its model is the simulated one. A guide that offers the example's parameters
 * to a user's app fails here. So does a sentence naming a parameter (`` `X` parameter ``) that
 * neither declares.
 */

/** Every `cdk deploy` command in the shell blocks of `markdown`, its continuation lines joined, with whether its block is the example app's. */
function deployCommands(markdown: string): { command: string; exampleApp: boolean }[] {
  const blocks = [...markdown.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)].map((match) => match[1]!.replace(/\\\n\s*/g, ' '));
  return blocks.flatMap((block) => {
    const exampleApp = /^#.*\binfra\/app\.ts\b/m.test(block);
    return block
      .split('\n')
      .filter((line) => /\bcdk deploy\b/.test(line))
      .map((command) => ({ command, exampleApp }));
  });
}

const parametersOf = (command: string) => [...command.matchAll(/--parameters\s+([A-Za-z0-9]+)=/g)].map((match) => match[1]!);
const declaredBy = (template: Template) => template.toJSON().Parameters as Record<string, { Default?: unknown }>;

/** A user's app as the README's first agent makes one (its model the default, simulated one): the parameters SavepointStack itself declares. */
function userAppParameters(): Record<string, { Default?: unknown }> {
  const stack = new SavepointStack(assertionApp(), 'Agents');
  stack.addAgent('Notes', { agentName: 'inbox-notes', entry: 'my-agent.ts' });
  return Object.fromEntries(Object.entries(declaredBy(Template.fromStack(stack))).filter(([name]) => name !== 'BootstrapVersion'));
}

describe('the deploy commands of the README and the guides', () => {
  const example = declaredBy(exampleTemplate());
  const user = userAppParameters();
  const commands = [...DOC_FILES].flatMap(([path, text]) => deployCommands(text).map((found) => ({ path, ...found })));

  it("are found, the example app's marked as such", () => {
    expect(commands.filter((found) => found.exampleApp).length).toBeGreaterThanOrEqual(2);
    expect(Object.keys(user)).toEqual(['ModelApiUrl']);
    expect(Object.keys(example)).toEqual(expect.arrayContaining(['ModelApiUrl', 'PaymentsApiUrl', 'Approvers']));
  });

  it.each(commands.map((found) => [found.path, found.exampleApp ? 'example app' : "a user's app", found.command, found.exampleApp] as const))(
    '%s (%s): name only parameters its app declares, and every one it declares without a default: %s',
    (_, __, command, exampleApp) => {
      const declared = exampleApp ? example : user;
      const named = parametersOf(command);
      expect(named.filter((name) => !(name in declared)), 'named but not declared').toEqual([]);
      // A user's app with a real model declares no ModelApiUrl: a command without it is true of that app too.
      const required = Object.entries(declared).filter(([name, parameter]) => parameter.Default === undefined && (exampleApp || named.length > 0 || name !== 'ModelApiUrl')).map(([name]) => name);
      expect(required.filter((name) => !named.includes(name)), 'declared without a default but not named').toEqual([]);
    },
  );

  it('name in their prose only parameters an app declares', () => {
    const said = [...DOC_FILES].flatMap(([path, text]) => [...text.matchAll(/`([A-Z][A-Za-z0-9]+)` parameters?\b|\bparameters? `([A-Z][A-Za-z0-9]+)`/g)].map((match) => ({ path, name: (match[1] ?? match[2])! })));
    expect(said.map(({ name }) => name)).toEqual(expect.arrayContaining(['ModelApiUrl', 'Approvers']));
    expect(said.filter(({ name }) => !(name in example) && !(name in user))).toEqual([]);
  });

  it("would refuse the example's parameters on a user's app", () => {
    const [found] = deployCommands('```sh\nnpx cdk deploy --parameters ModelApiUrl=https://… --parameters PaymentsApiUrl=https://…\n```');
    expect(found!.exampleApp).toBe(false);
    expect(parametersOf(found!.command).filter((name) => !(name in user))).toEqual(['PaymentsApiUrl']);
  });
});
