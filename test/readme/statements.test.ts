import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DOC_FILES } from './readme-text.js';
import { claimOf, clausesOf, type Claim } from './statements.js';

/**
 * What the README and the guides say of savepoint's dependencies is true of package.json: a clause
 * that calls named packages dependencies, optional peers or devDependencies — or says they are not
 * dependencies — is held to the manifest, and so is the "needs" column of the entry points' table.
 * The entry points' table names every entry point. A guide that says a package is missing when it is installed (issue 39: the Secrets Manager reader
 * "not yet wired", neither of its packages "a dependency yet", while both were) fails here, naming
 * the file and the clause. The deploy parameters the guides name: test/infra/readme-deploy.test.ts.
 */
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  exports: Record<string, unknown>;
};

/** Whether package.json bears `claim` out for `name`. */
function holds(claim: Claim, name: string): boolean {
  const dependency = name in pkg.dependencies;
  switch (claim) {
    case 'dependency':
      return dependency;
    case 'not a dependency':
      return !dependency;
    case 'optional peer':
      return name in pkg.peerDependencies && pkg.peerDependenciesMeta[name]?.optional === true && !dependency;
    case 'devDependency':
      return name in pkg.devDependencies && !dependency;
  }
}

/** Each claim of the README and the guides, with where it is made. */
function claims(): { where: string; clause: string; claim: Claim; packages: string[] }[] {
  return [...DOC_FILES].flatMap(([path, text]) =>
    clausesOf(text).flatMap((clause) => {
      const found = claimOf(clause);
      return found ? [{ where: path, clause, ...found }] : [];
    }),
  );
}

describe('what the README and the guides say of the dependencies', () => {
  it('is true of package.json', () => {
    const made = claims();
    // The scan finds the statements it should: the optional peers, the model SDKs, the devDependency of the API reference.
    expect(made.flatMap((found) => found.packages.map((name) => `${found.claim}: ${name}`))).toEqual(
      expect.arrayContaining(['optional peer: aws-local-stepfunctions', 'optional peer: dynalite', 'dependency: @anthropic-ai/sdk', 'devDependency: typescript-6']),
    );
    const untrue = made.flatMap(({ where, clause, claim, packages }) => packages.filter((name) => !holds(claim, name)).map((name) => `${where}: ${name} is said to be ${claim === 'not a dependency' ? 'no dependency' : `a ${claim}`}: "${clause}"`));
    expect(untrue).toEqual([]);
  });

  it("holds the entry points' table to it: it names every entry point of package.json, and each package one needs is an optional peer", () => {
    const table = /\| import \| what it is \| needs \|\n\|[-|]+\|\n((?:\|.*\|\n?)+)/.exec([...DOC_FILES.values()].join('\n\n'))?.[1];
    expect(table, "the entry points' table").toBeDefined();
    const named = table!.split('\n').map((row) => /^\| `([^`]+)` \|/.exec(row)?.[1]);
    const entryPoints = Object.keys(pkg.exports).filter((subpath) => subpath !== './package.json').map((subpath) => (subpath === '.' ? 'savepoint' : `savepoint/${subpath.slice(2)}`));
    expect(entryPoints.filter((entry) => !named.includes(entry))).toEqual([]);
    const needed = table!.split('\n').flatMap((row) => [...(row.split('|').at(-2) ?? '').matchAll(/`((?:@[a-z0-9-]+\/)?[a-z0-9][a-z0-9._-]*)`/g)].map((match) => match[1]!));
    expect(needed).toEqual(expect.arrayContaining(['aws-cdk-lib', 'constructs', 'esbuild', 'aws-local-stepfunctions', 'dynalite']));
    expect(needed.filter((name) => !holds('optional peer', name))).toEqual([]);
  });

  it('reads a clause as it is meant, and would notice an untrue one', () => {
    const read = (clause: string) => claimOf(clause);
    expect(read('Not yet wired: neither `@aws-lambda-powertools/parameters` nor `@aws-sdk/client-secrets-manager` is a dependency yet')).toEqual({
      claim: 'not a dependency',
      packages: ['@aws-lambda-powertools/parameters', '@aws-sdk/client-secrets-manager'],
    });
    expect(holds('not a dependency', '@aws-sdk/client-secrets-manager')).toBe(false);
    expect(read('everything else is an optional peer dependency (`peerDependenciesMeta`), installed by the projects that use it: `esbuild` (TypeScript agents)')).toEqual({ claim: 'optional peer', packages: ['esbuild'] });
    expect(holds('optional peer', 'zod')).toBe(false);
    expect(read('(`@anthropic-ai/sdk` 29 MB, `openai` 20 MB on disk): they are dependencies because the CallModel bundle must hold it')?.claim).toBe('dependency');
    expect(read('`savepoint run` prints a report')).toBeUndefined();
    expect(clausesOf('One **optional peer\ndependency**: `a`; the other. Next `b`.\n\n```sh\n`c` is a dependency\n```')).toEqual(['One optional peer dependency: `a`', 'the other.', 'Next `b`.']);
    expect(clausesOf('(An aside; with `x` in it.) They are dependencies: `y`.')).toEqual(['(An aside; with `x` in it.)', 'They are dependencies: `y`.']);
  });
});
