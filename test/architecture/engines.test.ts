import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
// semver is what npm itself decides EBADENGINE with; it ships no types of its own.
const semver = createRequire(import.meta.url)('semver') as {
  subset(range: string, superset: string): boolean;
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string } | null;
};

interface LockedPackage {
  version?: string;
  engines?: { node?: string } | string[];
  peerDependencies?: Record<string, string>;
}

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string }; peerDependencies: Record<string, string>; devDependencies: Record<string, string> };
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockedPackage> };
const ours = pkg.engines.node;

describe('engines', () => {
  it('declares no Node that a locked package refuses (npm ci on a supported Node warns EBADENGINE for nothing)', () => {
    const refusing = Object.entries(lock.packages)
      .filter(([path]) => path !== '')
      .flatMap(([path, locked]) => {
        // An old lock format allowed engines as an array of strings: npm ignores those.
        const theirs = Array.isArray(locked.engines) ? undefined : locked.engines?.node;
        return theirs !== undefined && !semver.subset(ours, theirs) ? [`${path.replace(/^.*node_modules\//, '')}@${locked.version} wants node ${theirs}`] : [];
      });
    expect(refusing).toEqual([]);
  });

  it("is what the README tells a fresh machine it needs", () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain(`A fresh machine needs Node \`${ours}\``);
  });

  it("the lock's root agrees with package.json", () => {
    expect((lock.packages[''] as LockedPackage).engines).toEqual(pkg.engines);
  });

  it(".ci/run runs everything on the oldest Node line the engines allow, fetched from the npm registry", () => {
    const ciRun = readFileSync(join(ROOT, '.ci/run'), 'utf8');
    const pinned = /^NODE_VERSION=(\S+)$/m.exec(ciRun)?.[1];
    expect(pinned).toBeDefined();
    expect(semver.satisfies(pinned!, ours)).toBe(true);
    expect(pinned!.split('.')[0]).toBe(semver.minVersion(ours)!.version.split('.')[0]);
    // The binary goes first on PATH before anything runs npm or node.
    const path = ciRun.indexOf('export PATH=');
    expect(path).toBeGreaterThan(0);
    expect(path).toBeLessThan(ciRun.indexOf('npm ci'));
  });
});

describe('peer dependencies', () => {
  it("admit no version of one peer that another, at the lowest version savepoint's range admits, refuses (npm would fail ERESOLVE)", () => {
    const peers = pkg.peerDependencies;
    const refused = Object.keys(peers).flatMap((name) => {
      const locked = lock.packages[`node_modules/${name}`]!;
      // The locked copy's peers are read: it must be the lowest savepoint admits (a later one may only ask more).
      if (locked.peerDependencies) expect(`${name}@${locked.version}`).toBe(`${name}@${semver.minVersion(peers[name]!)!.version}`);
      return Object.entries(locked.peerDependencies ?? {}).flatMap(([other, theirs]) =>
        other in peers && !semver.subset(peers[other]!, theirs) ? [`savepoint admits ${other} ${peers[other]}; ${name}@${locked.version} wants ${other} ${theirs}`] : [],
      );
    });
    expect(refused).toEqual([]);
  });
});
