import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { beforeAll, describe, expect, it } from 'vitest';
import { commandWord } from '../../cli/command-word.js';
import { COMMANDS, registerCommands } from '../../cli/register-commands.js';

/** A root command with the commands a command line registers, and what each command's help says. */
async function registered(...words: string[]): Promise<Map<string, string>> {
  const root = new Command('savepoint');
  await registerCommands(root, commandWord(['node', 'bin/savepoint.js', ...words]), () => '/nowhere', { out: () => {}, err: () => {} });
  return new Map(root.commands.map((command) => [command.name(), command.helpInformation()]));
}

describe('the commands a command line registers (cli/register-commands.ts)', () => {
  let all: Map<string, string>;
  beforeAll(async () => {
    all = await registered();
  });

  it('are every command when the line names none, each under the name COMMANDS lists it by', async () => {
    expect([...all.keys()]).toEqual([...Object.keys(COMMANDS), 'console']);
    expect(await registered('--help', 'replay')).toEqual(all);
    expect(await registered('replai', 'r1')).toEqual(all);
  });

  it("each has its row in docs/cli.md's table of commands", () => {
    const rows = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8').split('\n').filter((line) => line.startsWith('| `'));
    // `approve` and `reject` share a command module; `help` is commander's.
    const missing = [...all.keys(), 'approve', 'reject'].filter((name) => !rows.some((row) => row.startsWith(`| \`${name} `) || row.startsWith(`| \`${name}\``)));
    expect(missing).toEqual([]);
  });

  it.each(Object.keys(COMMANDS))('`%s` alone, with the same help as among all (and `console`, which adds to run and resume)', async (name) => {
    const alone = await registered('--state-dir', '/tmp/x', name, '--help');
    expect(alone.get(name)).toBe(all.get(name));
    expect(alone.has('console')).toBe(true);
    expect([...alone.keys()].every((registeredName) => all.get(registeredName) === alone.get(registeredName))).toBe(true);
  });
});
