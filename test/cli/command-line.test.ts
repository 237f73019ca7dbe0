import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  it('prints the usage of every command with --help, its examples last, and exits 0', async () => {
    const root = await savepoint(['--help']);
    expect(root).toMatchObject({ code: 0, stderr: '' });
    const commands = [...root.stdout.split(/^Commands:$/m)[1]!.matchAll(/^ {2}([a-z]+)/gm)].map((match) => match[1]!).filter((command) => command !== 'help');
    expect(commands).toEqual(expect.arrayContaining(['run', 'resume', 'status', 'approvals', 'approve', 'reject', 'kill', 'runs', 'replay', 'fork', 'verify', 'prune', 'console']));
    const helps = await Promise.all(commands.map(async (command) => [command, await savepoint([command, '--help'])] as const));
    const optionsIn = (help: string) => new Set([...help.split(/^Options:$/m)[1]!.split(/^\S/m)[0]!.matchAll(/^ {2}(?:-\w, )?(--[a-z-]+)/gm)].map((match) => match[1]!));
    const rootOptions = optionsIn(root.stdout);
    for (const [command, exit] of helps) {
      expect(exit, command).toMatchObject({ code: 0, stderr: '' });
      expect(exit.stdout, command).toMatch(new RegExp(`^Usage: savepoint ${command} `));
      // Its examples, last: each one this command, with only options it (or every command) has.
      const examples = exit.stdout.split(/^Examples:$/m)[1]?.trim().split('\n').map((line) => line.trim()) ?? [];
      expect(examples.length, command).toBeGreaterThan(0);
      const own = optionsIn(exit.stdout);
      for (const example of examples) {
        const words = example.split(/\s+/).filter((word) => !/^[A-Z_]+=/.test(word));
        expect(words.slice(0, 2), example).toEqual(['savepoint', command]);
        for (const option of words.filter((word) => word.startsWith('--'))) expect(own.has(option) || rootOptions.has(option), `${example}: ${option}`).toBe(true);
      }
    }
  }, 120_000);

  it('goes on to its end, quietly, when its reader has closed the pipe (`savepoint serve --help | head -1`)', async () => {
    // The pipe's reading end closed before the command writes a line: each write fails with EPIPE.
    const child = spawn(process.execPath, [new URL('../../bin/savepoint.js', import.meta.url).pathname, 'serve', '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  }, 60_000);

  it('says, with --stack and no AWS credentials, that the SDK found none and how to sign in (exit 2)', async () => {
    // No credentials anywhere the SDK's chain looks: the environment, a profile, the instance's metadata.
    const home = mkdtempSync(join(tmpdir(), 'savepoint-no-aws-'));
    try {
      const noAws = Object.fromEntries(Object.keys(process.env).filter((name) => name.startsWith('AWS_')).map((name) => [name, '']));
      const exit = await savepoint(['runs', '--stack', 'Agents', '--region', 'eu-west-1'], { env: { ...noAws, AWS_EC2_METADATA_DISABLED: 'true', HOME: home } });
      expect(exit.code, exit.stderr).toBe(2);
      expect(exit.stderr).toMatch(/^savepoint: --stack: the AWS SDK found no credentials \(.+\): sign in first \(aws sso login, AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY\)\n$/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 60_000);

  it('says, with --stack and no usable AWS region, that the SDK found none and how to give one (exit 2)', async () => {
    // No region anywhere the SDK looks (the environment, a profile, the instance's metadata), then one that is no region's name.
    const home = mkdtempSync(join(tmpdir(), 'savepoint-no-region-'));
    try {
      const noAws = Object.fromEntries(Object.keys(process.env).filter((name) => name.startsWith('AWS_')).map((name) => [name, undefined]));
      const env = { ...noAws, AWS_EC2_METADATA_DISABLED: 'true', HOME: home };
      const said = /^savepoint: region: the AWS SDK found no usable region \((.+)\): pass one \(--region <region>\), or set AWS_REGION or a region in your AWS profile\n$/;
      const missing = await savepoint(['runs', '--stack', 'Agents'], { env });
      expect(missing.code, missing.stderr).toBe(2);
      expect(missing.stderr).toMatch(said);
      const malformed = await savepoint(['runs', '--stack', 'Agents', '--region', 'eu west 1'], { env });
      expect(malformed.code, malformed.stderr).toBe(2);
      expect(malformed.stderr).toMatch(said);
      expect(malformed.stderr).toMatch(/eu west 1/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 60_000);

  it("prints its version with --version, and exits 0", async () => {
    expect(await savepoint(['--version'])).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
  });
});
