import { describe, expect, it } from 'vitest';
import { exampleTemplate } from './example-template.js';
import { README } from '../readme/readme-text.js';

/**
 * Issue 20, item 9: the README's deploy commands, as written, against the example app's
 * synthesized Parameters. CloudFormation refuses a deploy that names a parameter the template does
 * not declare, and one that leaves out a parameter without a default ("Parameters" in the
 * CloudFormation User Guide, https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/parameters-section-structure.html).
 */

/** Every `cdk deploy` command in the README's shell blocks, its continuation lines joined. */
function deployCommands(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)].map((match) => match[1]!.replace(/\\\n\s*/g, ' '));
  return blocks.flatMap((block) => block.split('\n')).filter((line) => /\bcdk deploy\b/.test(line));
}

const parametersOf = (command: string) => [...command.matchAll(/--parameters\s+([A-Za-z0-9]+)=/g)].map((match) => match[1]!);

describe("the README's deploy commands", () => {
  const declared = exampleTemplate().toJSON().Parameters as Record<string, { Default?: unknown }>;
  const commands = deployCommands(README);

  it('are found', () => {
    expect(commands.length).toBeGreaterThanOrEqual(2);
  });

  it.each(commands)('name only parameters the template declares, and every one it declares without a default: %s', (command) => {
    const named = parametersOf(command);
    expect(named.filter((name) => !(name in declared)), 'named but not declared').toEqual([]);
    const required = Object.entries(declared).filter(([, parameter]) => parameter.Default === undefined).map(([name]) => name);
    expect(required.filter((name) => !named.includes(name)), 'declared without a default but not named').toEqual([]);
  });
});
