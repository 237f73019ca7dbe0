import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { savepoint } from '../support/cli-process.js';

/** What the process answers to a command line it cannot run: usage errors exit 2, like invalid input; --version and --help exit 0. */

const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

describe('the command line', () => {
  it.each([
    ['an unknown command', ['nope'], /^error: unknown command 'nope'/],
    ['an unknown option', ['status', 'some-run', '--bogus'], /^error: unknown option '--bogus'/],
    ['a bad option value', ['run', '--approve', 'maybe'], /^error: option '--approve <mode>' argument 'maybe' is invalid\. Allowed choices are prompt, approve, reject, wait\./],
  ])('exits 2 for %s, saying what is wrong and where the usage is', async (_, args, message) => {
    const exit = await savepoint(args);
    expect(exit.code).toBe(2);
    expect(exit.stderr).toMatch(message);
    expect(exit.stderr).toMatch(/\(add --help for the usage\)\n$/);
  });

  it('prints the usage of every command with --help, and exits 0', async () => {
    const root = await savepoint(['--help']);
    expect(root).toMatchObject({ code: 0, stderr: '' });
    const commands = [...root.stdout.split(/^Commands:$/m)[1]!.matchAll(/^ {2}([a-z]+)/gm)].map((match) => match[1]!).filter((command) => command !== 'help');
    expect(commands).toEqual(expect.arrayContaining(['run', 'resume', 'status', 'approvals', 'approve', 'reject', 'kill', 'runs', 'replay', 'fork', 'verify', 'prune', 'console']));
    const helps = await Promise.all(commands.map(async (command) => [command, await savepoint([command, '--help'])] as const));
    for (const [command, exit] of helps) {
      expect(exit, command).toMatchObject({ code: 0, stderr: '' });
      expect(exit.stdout, command).toMatch(new RegExp(`^Usage: savepoint ${command} `));
    }
  }, 120_000);

  it("prints its version with --version, and exits 0", async () => {
    expect(await savepoint(['--version'])).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
  });
});
