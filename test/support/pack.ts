import { execFile } from 'node:child_process';
import { createHash, type Hash } from 'node:crypto';
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { whenChanged } from './when-changed.js';

const exec = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
/** Held while one test process packs: `npm pack` runs prepack (bin/build.js), which empties dist/ and compiles it again. */
const LOCK = join(ROOT, 'node_modules', '.cache', 'savepoint-pack.lock');

/** Whether the process that holds the lock is gone (a test process killed mid-pack leaves its lock behind). */
function heldByTheDead(): boolean {
  try {
    process.kill(Number(readFileSync(join(LOCK, 'pid'), 'utf8')), 0);
    return false;
  } catch (error) {
    // No pid yet (ENOENT) is a lock being taken this instant: held, not dead.
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Takes the lock, waiting (on the lock's directory's changes, no timer) while another process holds it. */
async function lock(): Promise<void> {
  await whenChanged(join(LOCK, '..'), () => {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // Removing a dead holder's lock is a change of the directory: it wakes the next attempt.
      if (heldByTheDead()) rmSync(LOCK, { recursive: true, force: true });
      return false;
    }
  });
}

/**
 * The repository packed by `npm pack`, copied into `destination`: the tarball's path. Packed at
 * most once a run (prepack compiles the whole of dist/ and synthesizes its templates), and not at
 * all when an earlier run packed the same inputs (packOnce): the first caller puts it in the run's
 * directory (test/support/run-dir.ts) and the next ones copy that tarball. One pack at a time
 * across the test processes (package-app and own-agent each install the package): two prepacks at
 * once empty dist/ under each other's compiler and one fails.
 */
export async function packRepository(destination: string, timeoutMs: number): Promise<string> {
  // Without the global setup (another config), no sharing: packed for this caller alone.
  const runDir = inject('runDir') ?? destination;
  await lock();
  try {
    const tarball = packedIn(runDir) ?? (await packOnce(runDir, timeoutMs));
    if (runDir === destination) return tarball;
    const copy = join(destination, tarball.slice(runDir.length + 1));
    copyFileSync(tarball, copy);
    return copy;
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

function packedIn(dir: string): string | undefined {
  const packed = readdirSync(dir).find((name) => name.endsWith('.tgz'));
  return packed && join(dir, packed);
}

async function pack(destination: string, timeoutMs: number): Promise<string> {
  const { stdout } = await exec('npm', ['pack', '--silent', '--pack-destination', destination], { cwd: ROOT, timeout: timeoutMs });
  return join(destination, stdout.trim().split('\n').at(-1)!);
}

/** Where packed tarballs are kept between runs, each in a directory named by the hash of what it was packed from (packInputs). */
const PACKED = join(ROOT, 'node_modules', '.cache', 'savepoint', 'packed');

/**
 * The repository packed into `destination` (called with the lock held): a copy of the tarball an
 * earlier run packed from the same inputs (packInputs), else `npm pack`, whose tarball is then
 * kept for the next run. A pack is about 8 s of CPU (prepack compiles dist/ and synthesizes its
 * templates), the same every run while nothing it reads changed. Kept in a directory made under
 * another name and renamed (a run killed while keeping it leaves nothing half-written to use),
 * only the newest; on a fresh clone, or where npm's version cannot be read, nothing is kept and
 * each run packs.
 */
async function packOnce(destination: string, timeoutMs: number): Promise<string> {
  const key = packInputs();
  const kept = key === undefined ? undefined : join(PACKED, key);
  const keptTarball = kept && existsSync(kept) ? packedIn(kept) : undefined;
  if (keptTarball) {
    const copy = join(destination, basename(keptTarball));
    copyFileSync(keptTarball, copy);
    return copy;
  }
  const tarball = await pack(destination, timeoutMs);
  if (kept) {
    rmSync(PACKED, { recursive: true, force: true });
    mkdirSync(`${kept}.making`, { recursive: true });
    copyFileSync(tarball, join(`${kept}.making`, basename(tarball)));
    renameSync(`${kept}.making`, kept);
  }
  return tarball;
}

/**
 * Entries of the repository that no `npm pack` reads: what it makes (dist/, which prepack builds
 * again), the tests (neither packed nor compiled by the build), the installed packages (counted by
 * npm's record of them, below), the CDK's output, the generated API pages, and the helpers' scratch
 * directories (tmp-*). Everything else counts, a file added anywhere included, so that a change the
 * list did not foresee repacks rather than reuses a stale tarball. Directories whose name starts
 * with a dot are skipped too (.git, .savepoint state, .ci's Node); dot files are not (.npmignore).
 */
const NOT_PACKED = new Set(['node_modules', 'dist', 'test', 'cdk.out', 'docs/api']);

/**
 * The hash of what `npm pack` of this checkout is made from: the path, mode and bytes of every file
 * of the repository it may read (NOT_PACKED aside), the installed dependencies as npm recorded them
 * (node_modules/.package-lock.json: the compiler, the CDK the templates are synthesized with, the
 * types), the versions of Node and of the npm that packs, and the CDK's settings in the environment.
 * Undefined when npm's version cannot be read.
 */
function packInputs(): string | undefined {
  const npm = npmVersion();
  const installed = join(ROOT, 'node_modules', '.package-lock.json');
  if (npm === undefined || !existsSync(installed)) return undefined;
  // The CDK's settings from the environment (CDK_CONTEXT_JSON, CDK_DEFAULT_REGION, …): the build synthesizes templates.
  const cdkSettings = Object.entries(process.env).filter(([name]) => name.startsWith('CDK_')).sort();
  const hash = createHash('sha256').update(JSON.stringify({ node: process.version, npm, cdkSettings }));
  hashTree(hash, '');
  hash.update(readFileSync(installed));
  return hash.digest('hex').slice(0, 32);
}

function hashTree(hash: Hash, dir: string): void {
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (NOT_PACKED.has(path) || (dir === '' && entry.name.startsWith('tmp-'))) continue;
    if (entry.isDirectory()) {
      if (!entry.name.startsWith('.')) hashTree(hash, path);
    } else if (entry.isFile()) {
      hash.update(`${path}\0${statSync(join(ROOT, path)).mode & 0o777}\0`).update(readFileSync(join(ROOT, path))).update('\0');
    } else if (entry.isSymbolicLink()) hash.update(`${path}\0-> ${readlinkSync(join(ROOT, path))}\0`);
  }
}

/** The version of the npm that `exec('npm', …)` runs: npm's package.json above the `npm` first on PATH. */
function npmVersion(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const bin = join(dir, 'npm');
    if (dir === '' || !existsSync(bin)) continue;
    for (let at = dirname(realpathSync(bin)); at !== dirname(at); at = dirname(at)) {
      const manifest = join(at, 'package.json');
      if (!existsSync(manifest)) continue;
      const { name, version } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
      return name === 'npm' ? version : undefined;
    }
    return undefined;
  }
  return undefined;
}

/** The version of each package that savepoint's own package.json installs (so npm's cache has it). */
function projectVersions(): Record<string, string> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
  return { ...pkg['devDependencies'], ...pkg['dependencies'] };
}

/** Each package at the version the project itself installs (so npm's cache has it); a name the project lacks fails. */
export function pinned(...names: string[]): Record<string, string> {
  const versions = projectVersions();
  return Object.fromEntries(
    names.map((name) => {
      if (!versions[name]) throw new Error(`${name}: not a dependency of savepoint's own package.json, so no version to pin`);
      return [name, versions[name]];
    }),
  );
}

/** What a test's app depends on besides savepoint: package name → version. */
export interface AppManifest {
  name: string;
  dependencies: Record<string, string>;
  devDependencies?: Record<string, string>;
}

/** The optional peers the run's shared install holds beside savepoint: what its local engine (`savepoint serve`) runs on. */
const SHARED_PEERS = ['aws-local-stepfunctions', 'esbuild'];

const npmInstall = (cwd: string, timeoutMs: number) => exec('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd, timeout: timeoutMs });

/**
 * A package of a user's at `app` (a directory not yet made, in a directory of the caller's own: the
 * packed tarball is copied there), savepoint from `npm pack` (`file:../savepoint-….tgz`) among its
 * dependencies, installed by npm. Most of an install is npm writing the files of savepoint's own
 * dependencies (some 22,000, the AWS SDK's), the same in every app: npm installs savepoint with
 * SHARED_PEERS once a run, in the run's directory, and an app that depends on at least those (at
 * the project's versions) starts from that install's files, hard-linked, and `npm install` adds
 * what else it names, as it would to a user's existing node_modules: the same tree, file for file
 * (own-agent's app: 15-17 s of npm's CPU installed afresh, 6-9 s this way; package-app's, which
 * names no more, is that install). npm replaces a package's files rather than writing into them,
 * and its record of the tree, which it rewrites in place, is copied (linkInstall), so an app's
 * install never changes the shared one's.
 */
export async function installApp(app: string, manifest: AppManifest, timeoutMs: number): Promise<void> {
  const tarball = await packRepository(join(app, '..'), timeoutMs);
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ ...manifest, private: true, type: 'module', dependencies: { savepoint: `file:../${basename(tarball)}`, ...manifest.dependencies } }, null, 2));
  const runDir = inject('runDir');
  const peers = pinned(...SHARED_PEERS);
  const named = { ...manifest.dependencies, ...manifest.devDependencies };
  if (runDir === undefined || !SHARED_PEERS.every((name) => named[name] === peers[name])) await npmInstall(app, timeoutMs);
  else {
    linkInstall(join(await sharedInstall(runDir, timeoutMs), 'node_modules'), join(app, 'node_modules'));
    if (Object.keys(named).length > SHARED_PEERS.length) await npmInstall(app, timeoutMs);
  }
  await warmCli(app, timeoutMs);
}

/**
 * The installed CLI's first start, which builds its bundle (bin/bundle.js; the app's own: the
 * bundle names the install's absolute path): made once here, before a test file starts several
 * commands at once, each of which would otherwise build it too.
 */
async function warmCli(app: string, timeoutMs: number): Promise<void> {
  await exec(process.execPath, [join(app, 'node_modules/.bin/savepoint'), '--version'], { cwd: app, timeout: timeoutMs });
}

/**
 * The run's shared install (installApp), made by its first caller; the lock keeps the others waiting
 * for it. Its package and each app's name the tarball beside them alike (`file:../savepoint-….tgz`,
 * the same bytes), so an app's npm finds savepoint installed as it asks (an absolute path, another
 * for each, had it extract savepoint's 2,000 files again).
 */
async function sharedInstall(runDir: string, timeoutMs: number): Promise<string> {
  const dir = join(runDir, 'installed');
  await lock();
  try {
    if (existsSync(dir)) return dir;
    const tarball = packedIn(runDir) ?? (await packOnce(runDir, timeoutMs));
    // Made under another name and renamed once installed: a failed install leaves no half of one.
    const making = `${dir}.making`;
    rmSync(making, { recursive: true, force: true });
    mkdirSync(making);
    const dependencies = { savepoint: `file:../${basename(tarball)}`, ...pinned(...SHARED_PEERS) };
    writeFileSync(join(making, 'package.json'), JSON.stringify({ name: 'savepoint-installed', private: true, type: 'module', dependencies }));
    await npmInstall(making, timeoutMs);
    renameSync(making, dir);
    return dir;
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

/** npm's record of the tree it installed in a node_modules (its hidden lockfile). */
const HIDDEN_LOCKFILE = '.package-lock.json';

/**
 * `from`'s node_modules again at `to` (linkTree), for npm to install into as into its own: npm's
 * record of that tree (HIDDEN_LOCKFILE) copied, not linked, and last. npm trusts the record only
 * when no directory of the tree is newer than it; the directories made here are, so a linked
 * record, older than they, had npm read every package back from disk (own-agent's app: its
 * `npm install` 6.0-7.1 s of CPU, against 4.4-4.9 s with the record) and write a record without
 * their integrity, unlike a fresh install's; and npm rewrites the record in place, which through a
 * link rewrote `from`'s too.
 */
function linkInstall(from: string, to: string): void {
  linkTree(from, to, (name) => name === HIDDEN_LOCKFILE);
  if (existsSync(join(from, HIDDEN_LOCKFILE))) copyFileSync(join(from, HIDDEN_LOCKFILE), join(to, HIDDEN_LOCKFILE));
}

/** `from`'s tree again at `to`: directories made, files hard-linked (copied across file systems), symbolic links (node_modules/.bin's, relative) as they are; a top-level entry `skipped` names left out. */
function linkTree(from: string, to: string, skipped: (name: string) => boolean = () => false): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (skipped(entry.name)) continue;
    const [source, target] = [join(from, entry.name), join(to, entry.name)];
    if (entry.isDirectory()) linkTree(source, target);
    else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
    else {
      try {
        linkSync(source, target);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
        copyFileSync(source, target);
      }
    }
  }
}
