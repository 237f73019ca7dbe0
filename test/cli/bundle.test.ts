import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { agentBundle, cliBundle, ENTRIES, isIntact } from '../../bin/bundle.js';
import { pathToFileURL } from 'node:url';
import { readmeFiles } from '../readme/readme-text.js';

/**
 * The CLI's bundle (bin/bundle.js), end to end through bin/savepoint.js: a project of its own in a
 * temporary directory (bin/ copied, esbuild and tsx linked from this project), whose entry points
 * are tiny modules that print what they are. Every start is a real `node` process.
 */
const exec = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'savepoint-bundle-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function project(name: string): { root: string; cache: string; write: (file: string, text: string) => void; start: (env?: Record<string, string>, args?: string[]) => Promise<string> } {
  const root = join(work, name);
  const write = (file: string, text: string) => {
    mkdirSync(join(root, file, '..'), { recursive: true });
    writeFileSync(join(root, file), text);
  };
  cpSync(join(ROOT, 'bin'), join(root, 'bin'), { recursive: true });
  mkdirSync(join(root, 'node_modules'));
  for (const pkg of ['esbuild', 'tsx']) symlinkSync(join(ROOT, 'node_modules', pkg), join(root, 'node_modules', pkg));
  write('package.json', JSON.stringify({ name: 'savepoint', type: 'module' }));
  write('tsconfig.json', JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', strict: true } }));
  write(ENTRIES.cli, "import { version } from './version.js';\nconsole.log(`${version} ${new URL('.', import.meta.url).pathname} ${import.meta.dirname}`);\n");
  write('cli/version.ts', "export const version: string = 'v1';\n");
  for (const entry of [ENTRIES.savepoint, ENTRIES['savepoint/sim'], ENTRIES['savepoint/client']]) write(entry, 'export const entry = 1;\n');
  const cache = join(root, 'node_modules', '.cache', 'savepoint');
  const start = async (env: Record<string, string> = {}, args: string[] = []) => {
    const { SAVEPOINT_BUNDLE_CACHE: _, SAVEPOINT_FROM_SOURCE: __, ...inherited } = process.env;
    const { stdout } = await exec(process.execPath, [join(root, 'bin', 'savepoint.js'), ...args], { env: { ...inherited, ...env }, timeout: 60_000 });
    return stdout.trim();
  };
  return { root, cache, write, start };
}

const builds = (cache: string) => readdirSync(cache).filter((name) => /^cli-[0-9a-f]+$/.test(name));

/** The text of every JavaScript file of a bundle directory, one after another. */
const bundleText = (dir: string) =>
  readdirSync(dir, { recursive: true })
    .filter((file) => String(file).endsWith('.js'))
    .map((file) => readFileSync(join(dir, String(file)), 'utf8'))
    .join('\n');

describe('the CLI bundle', { timeout: 120_000 }, () => {
  it('is built on the first start, reused by the next, and rebuilt after a source changes (no stale code)', async () => {
    const { root, cache, write, start } = project('change');
    expect(await start()).toBe(`v1 ${root}/cli/ ${root}/cli`); // import.meta.url is the source file's, not the bundle's
    const [first] = builds(cache);
    expect(await start()).toBe(`v1 ${root}/cli/ ${root}/cli`);
    expect(builds(cache)).toEqual([first]);

    write('cli/version.ts', "export const version: string = 'v2';\n");
    expect(await start()).toBe(`v2 ${root}/cli/ ${root}/cli`);
    expect(builds(cache)).toHaveLength(2);
    expect(builds(cache)).toContain(first);
  });

  it('forgets, as it builds, the indexes of builds that are gone once they are an hour old', async () => {
    const { cache, write, start } = project('indexes');
    await start();
    const index = (key: string, hoursAgo: number) => {
      const file = join(cache, `index-cli-${key}.json`);
      writeFileSync(file, JSON.stringify({ key, files: [[join(cache, 'x.ts'), 'missing']] }));
      const then = Date.now() / 1000 - hoursAgo * 3600;
      utimesSync(file, then, then);
      return file;
    };
    const [kept] = builds(cache);
    const [stale, recent, ofAKeptBuild] = [index('0'.repeat(24), 2), index('1'.repeat(24), 0), index(kept!.slice('cli-'.length), 2)];
    const unreadable = join(cache, 'index-cli-damaged.json');
    writeFileSync(unreadable, '{');
    utimesSync(unreadable, Date.now() / 1000 - 7200, Date.now() / 1000 - 7200);
    write('cli/version.ts', "export const version: string = 'v2';\n");
    await start(); // a build, which prunes
    expect([stale, recent, ofAKeptBuild, unreadable].map((file) => existsSync(file))).toEqual([false, true, true, false]);
  });

  it("keeps each agent's build while starts use it, however many agents a project has: an edit rebuilds that agent alone; a build no start used for a day goes at the next build, but for the three used last", async () => {
    const { root, cache } = project('agents');
    const cli = await cliBundle({ root, cacheDir: cache });
    const agents = ['a', 'b', 'c', 'd', 'e'].map((name) => {
      const file = join(root, 'agents', `${name}.ts`);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, `export const name: string = '${name}';\n`);
      return file;
    });
    const buildOf = async (file: string) => dirname(await agentBundle(file, cli, { root }));
    const lastUsed = (dir: string, hoursAgo: number) => {
      const then = Date.now() / 1000 - hoursAgo * 3600;
      utimesSync(dir, then, then);
    };
    const first: string[] = [];
    for (const file of agents) first.push(await buildOf(file));
    expect(new Set(first).size).toBe(5);
    for (const dir of first) lastUsed(dir, 2);
    // Node's compile cache of the builds (bin/savepoint.js enables it there): an entry of each.
    const compiled = join(cache, 'compile', `v${process.versions.node}-x64-0-0`);
    mkdirSync(compiled, { recursive: true });
    for (const dir of first) writeFileSync(join(compiled, basename(dir)), 'code');

    // An edit of one agent, two hours after the others were used: its build is made again; the other four stay, and are used as they are.
    writeFileSync(agents[0]!, "export const name: string = 'a, edited';\n");
    const edited = await buildOf(agents[0]!);
    expect(edited).not.toBe(first[0]);
    expect(first.map((dir) => existsSync(dir))).toEqual([true, true, true, true, true]);
    for (const index of [1, 2, 3, 4]) expect(await buildOf(agents[index]!)).toBe(first[index]);
    // No build went: the compiled code stays.
    expect(readdirSync(compiled)).toHaveLength(5);

    // A day on: the first build of a, and b's and c's, unused since; d, e and a's new one used now.
    for (const dir of [first[0]!, first[1]!, first[2]!]) lastUsed(dir, 25);
    writeFileSync(agents[3]!, "export const name: string = 'd, edited';\n");
    const editedAgain = await buildOf(agents[3]!);
    expect([edited, first[3]!, first[4]!, editedAgain].map((dir) => existsSync(dir))).toEqual([true, true, true, true]);
    expect([first[0]!, first[1]!, first[2]!].map((dir) => existsSync(dir))).toEqual([false, false, false]);
    // Builds went: Node's compile cache is emptied with them (Node removes no entry of its own), and made again by the next starts.
    expect(existsSync(join(cache, 'compile'))).toBe(false);
    // And b, whose build went, is built again when it is used.
    expect(existsSync(join(await buildOf(agents[1]!), 'agent.js'))).toBe(true);
  });

  it('rebuilds a damaged bundle instead of running it', async () => {
    const { cache, start, root } = project('damage');
    await start();
    const [dir] = builds(cache);
    const entry = join(cache, dir!, 'cli', 'savepoint.js');
    // Appended, not edited in place: what the entry file holds depends on how esbuild splits the bundle.
    writeFileSync(entry, `${readFileSync(entry, 'utf8')}\nconsole.log('tampered');\n`);
    expect(isIntact(join(cache, dir!))).toBe(false);

    expect(await start()).toBe(`v1 ${root}/cli/ ${root}/cli`);
    expect(isIntact(join(cache, dir!))).toBe(true);
    expect(readdirSync(cache).filter((name) => name.startsWith('cli-'))).toEqual([dir]); // the damaged copy is gone
  });

  it('is built by processes starting at once without harm: one bundle, no drafts left', async () => {
    const { cache, start, root } = project('concurrent');
    const outputs = await Promise.all([start(), start(), start(), start()]);
    expect(outputs).toEqual(Array(4).fill(`v1 ${root}/cli/ ${root}/cli`));
    expect(builds(cache)).toHaveLength(1);
    expect(readdirSync(cache).filter((name) => name.includes('.draft-') || name.includes('.damaged-'))).toEqual([]);
  });

  it('runs as ES modules, as it was built, never a format Node guesses: a file with no import or export is not taken for CommonJS', async () => {
    const { cache, write, start } = project('module');
    // CommonJS defines __filename (esbuild leaves it alone in an ES module's bundle).
    write(ENTRIES.cli, 'console.log(typeof __filename);\n');
    expect(await start()).toBe('undefined');
    const [dir] = builds(cache);
    // Declared by the build's own package.json, which its manifest holds (a damaged one is rebuilt).
    expect(JSON.parse(readFileSync(join(cache, dir!, 'package.json'), 'utf8'))).toEqual({ type: 'module' });
    // And by one in each of its directories (the nearest package.json is looked up for every module Node loads).
    const directories = readdirSync(join(cache, dir!), { recursive: true, withFileTypes: true }).filter((entry) => entry.isDirectory());
    expect(directories.map((entry) => entry.name)).toContain('cli');
    for (const entry of directories) expect(JSON.parse(readFileSync(join(entry.parentPath, entry.name, 'package.json'), 'utf8'))).toEqual({ type: 'module' });
    writeFileSync(join(cache, dir!, 'package.json'), '{}');
    expect(isIntact(join(cache, dir!))).toBe(false);
  });

  it('is ASCII where what was not is in comments (Node reads such a file as one-byte text); a template or a regular expression keeps its characters', async () => {
    const { cache, write, start } = project('ascii');
    // esbuild keeps a comment inside an expression, and escapes the string's characters itself.
    write(ENTRIES.cli, "console.log(\n  // kept by esbuild — with ≤ and 😀\n  'été',\n);\n");
    write(ENTRIES.savepoint, "export const entry = String.raw`ü—` + /é😀/u.source; // and a comment — beside them\n");
    expect(await start()).toBe('été');
    const [dir] = builds(cache);
    const cli = readFileSync(join(cache, dir!, ENTRIES.cli.replace(/\.ts$/, '.js')), 'utf8');
    expect(cli).toMatch(/^[\x00-\x7f]*$/);
    // Each UTF-16 unit one character: the columns after it are the source map's.
    expect(cli).toContain('// kept by esbuild ? with ? and ??');
    const savepoint = readFileSync(join(cache, dir!, ENTRIES.savepoint.replace(/\.ts$/, '.js')), 'utf8');
    expect(savepoint).toContain('String.raw`ü—`');
    expect(savepoint).toContain('/é😀/u');
    expect(isIntact(join(cache, dir!))).toBe(true);
  });

  it("fills a namespace object (`import * as`, zod's `z`) as a dictionary: each name a getter, as esbuild makes it, without a hidden class per name", async () => {
    const { write, start } = project('namespaces');
    write('cli/names.ts', Array.from({ length: 300 }, (_, index) => `export const n${index} = ${index};\n`).join(''));
    // `names` as a value: esbuild's own namespace object, filled by its __export helper.
    write(
      ENTRIES.cli,
      [
        "import * as names from './names.js';",
        "import { setFlagsFromString } from 'node:v8';",
        "setFlagsFromString('--allow-natives-syntax');",
        "const fast = new Function('object', 'return %HasFastProperties(object)');",
        "console.log(fast(names), Object.keys(names).length, Object.keys(names).slice(0, 3).join(), names.n299, 'n5' in names, Object.getOwnPropertyDescriptor(names, 'n7').get());",
      ].join('\n'),
    );
    expect(await start()).toBe('false 300 n0,n1,n10 299 true 7');
  });

  it("resolves its own files' imports itself, to the URLs Node's resolver gives (one instance of a module imported by a relative path and by its file URL, through a symlink too); anything else is Node's", async () => {
    const dir = join(work, 'resolve', 'bundle');
    const files: Record<string, string> = {
      'package.json': '{ "type": "module" }',
      'entry.js': `import './chunks/a.js';\nimport { b } from './chunks/b.js';\nimport '../outside.js';\nawait import(${JSON.stringify(pathToFileURL(join(dir, 'chunks', 'a.js')).href)});\nawait import(globalThis.bundleUrl + '/chunks/b.js');\n`,
      'chunks/a.js': "import '../chunks/b.js';\n",
      'chunks/b.js': 'export const b = 1;\n',
      '../outside.js': '',
    };
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(join(dir, file, '..'), { recursive: true });
      // Each module notes its URL as it runs: a module run twice would be two instances.
      writeFileSync(join(dir, file), file.endsWith('.js') ? `${text}(globalThis.loaded ??= []).push(import.meta.url);\n` : text);
    }
    symlinkSync(dir, join(work, 'resolve', 'link'));
    // What reaches Node's resolver (a hook registered first is the last one's `next`), and the modules that ran.
    const probe = join(work, 'resolve', 'probe.mjs');
    writeFileSync(
      probe,
      [
        "import { registerHooks } from 'node:module';",
        "import { pathToFileURL } from 'node:url';",
        'const [bundleJs, at, own] = process.argv.slice(2);',
        'globalThis.bundleUrl = pathToFileURL(at).href;',
        'const reached = [];',
        'registerHooks({ resolve: (specifier, context, next) => (reached.push(specifier), next(specifier, context)) });',
        "if (own === 'own') (await import(bundleJs)).resolveBundleImports(at);",
        'reached.length = 0;',
        "await import(globalThis.bundleUrl + '/entry.js');",
        'console.log(JSON.stringify({ reached, loaded: globalThis.loaded }));',
      ].join('\n'),
    );
    const probed = async (at: string, own: string) => JSON.parse((await exec(process.execPath, [probe, join(ROOT, 'bin', 'bundle.js'), at, own])).stdout);
    const real = pathToFileURL(dir).href;
    const byNode = await probed(dir, 'node');
    expect(byNode.loaded).toEqual([`${real}/chunks/b.js`, `${real}/chunks/a.js`, pathToFileURL(join(work, 'resolve', 'outside.js')).href, `${real}/entry.js`]);
    for (const at of [dir, join(work, 'resolve', 'link')]) {
      const own = await probed(at, 'own');
      expect(own.loaded).toEqual(byNode.loaded);
      // Node resolved the import outside the bundle and (through the symlink) the URLs that are not the bundle's real ones.
      const link = pathToFileURL(at).href;
      expect(own.reached).toEqual(at === dir ? ['../outside.js'] : [`${link}/entry.js`, '../outside.js', `${link}/chunks/b.js`]);
    }
  });

  it('starts `replay`, `run`, `resume` and `fork` alone with their own V8 flags (ONE_PASS_COMMANDS, set before the compile cache is on: a cache directory for each set of flags, the run commands without --no-turbofan, the young generation of a replay kept at its first size), the commands that run steps with the built-ins a run loads loaded first, read from the command line as the CLI reads its command word', async () => {
    const { cache, write, start } = project('eager');
    // The cache directory, whether fetch's classes (undici: loadRunBuiltins) were loaded before the CLI's code ran, and
    // whether V8's young generation grew while objects that live a while were made (replay: --semi-space-growth-factor=1).
    write(
      ENTRIES.cli,
      [
        "import { getCompileCacheDir } from 'node:module';",
        "import { getHeapSpaceStatistics } from 'node:v8';",
        "const young = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size;",
        'const first = young();',
        'let kept = [];',
        'for (let i = 0; i < 400_000; i += 1) { kept.push({ i }); if (kept.length > 50_000) kept = []; }',
        "console.log(getCompileCacheDir(), process.moduleLoadList.includes('NativeModule internal/deps/undici/undici'), young() > first);",
        '',
      ].join('\n'),
    );
    const startOf = async (args: string[], env: Record<string, string> = {}) => {
      const [dir, undici, grew] = (await start(env, args)).split(' ');
      return { dir, undici, grew };
    };
    const lazy = await startOf(['status', 'r']);
    expect(lazy.dir!.startsWith(join(cache, 'compile'))).toBe(true);
    expect(lazy.undici).toBe('false');
    expect(lazy.grew).toBe('true');
    const eager = await startOf(['replay', 'r']);
    expect(eager.dir!.startsWith(join(cache, 'compile'))).toBe(true);
    expect(eager.dir).not.toBe(lazy.dir);
    expect(eager.undici).toBe('false');
    // The replay's young generation stays at its first size: more scavenges, in memory already mapped and in the CPU's caches.
    expect(eager.grew).toBe('false');
    expect(await startOf(['--state-dir', 'x', '--region', 'y', 'replay', 'r', '--json'])).toEqual(eager);
    // The run commands: --no-lazy alone (TurboFan kept for a long run), so a directory neither the default's nor the replay's.
    const running = await startOf(['run', '--agent', 'a']);
    expect(running.dir!.startsWith(join(cache, 'compile'))).toBe(true);
    expect([lazy.dir, eager.dir]).not.toContain(running.dir);
    expect(running.undici).toBe('true');
    // Their young generation grows: a long run in 1 MB scavenges far more and promotes sooner (2,001 steps: 8.6 -> 12.8 s of CPU).
    expect(running.grew).toBe('true');
    for (const args of [['--state-dir', 'x', 'run'], ['resume', 'r'], ['fork', 'r', '--at', '2']]) expect(await startOf(args)).toEqual(running);
    // A root option's value, an option, a word after the command, the root's help: not the command `replay` or `run`.
    for (const args of [['--state-dir', 'replay', 'status'], ['--stack', 'run', 'runs'], ['--json', 'status', 'replay'], ['status', '--run-id', 'run'], ['--help', 'replay'], ['-h', 'run'], []]) expect(await startOf(args)).toEqual(lazy);
    // Without the compile cache, nothing is compiled eagerly: the directory is none.
    expect((await startOf(['replay', 'r'], { NODE_DISABLE_COMPILE_CACHE: '1' })).dir).toBe('undefined');
    expect((await startOf(['run'], { NODE_DISABLE_COMPILE_CACHE: '1' })).dir).toBe('undefined');
  });

  it('is not used with SAVEPOINT_FROM_SOURCE=1: the sources run through tsx', async () => {
    const { cache, start, root } = project('source');
    expect(await start({ SAVEPOINT_FROM_SOURCE: '1' })).toBe(`v1 ${root}/cli/ ${root}/cli`);
    expect(() => readdirSync(cache)).toThrow(/ENOENT/);
  });

  it('holds an inlined CommonJS package (INLINED_PACKAGES: commander) in its own code: its require of a built-in works, and its classes keep their names where the bundle renames them', async () => {
    const { cache, write, start } = project('inlined');
    // A stand-in for commander: CommonJS in two files, requiring a built-in, its error naming itself after its class (as commander's do).
    write('node_modules/commander/package.json', JSON.stringify({ name: 'commander', main: 'index.js' }));
    write('node_modules/commander/error.js', 'class CommanderError extends Error {\n  constructor() {\n    super("m");\n    this.name = this.constructor.name;\n  }\n}\nexports.CommanderError = CommanderError;\n');
    write('node_modules/commander/index.js', "const { EventEmitter } = require('node:events');\nconst { CommanderError } = require('./error.js');\nexports.CommanderError = CommanderError;\nexports.emitter = typeof EventEmitter;\n");
    // A class of the same name in the CLI's own code: the bundle renames one of the two.
    write(ENTRIES.cli, "import * as commander from 'commander';\nclass CommanderError {}\nconsole.log(new commander.CommanderError().name, commander.emitter, new CommanderError() instanceof commander.CommanderError);\n");
    expect(await start()).toBe('CommanderError function false');
    const bundled = bundleText(join(cache, builds(cache)[0]!));
    expect(bundled).toContain('// node_modules/commander/error.js');
    expect(bundled).not.toMatch(/from "commander"|require\("node:events"\)/);
  });

  it("loads an external CommonJS package with require where Node's import would load the same file (one instance with an import of it); ES modules, dual packages and import() stay imports; LAZY_EXPORTS load at their first call", async () => {
    const { cache, write, start } = project('required');
    const pkg = (name: string, manifest: object, files: Record<string, string>) => {
      write(`node_modules/${name}/package.json`, JSON.stringify({ name, ...manifest }));
      for (const [file, text] of Object.entries(files)) write(`node_modules/${name}/${file}`, text);
    };
    pkg('cjs-pkg', { main: 'index.js' }, { 'index.js': 'exports.named = { from: "cjs" };\n' });
    pkg('cjs-lazy', { main: 'index.js' }, { 'index.js': 'exports.later = "later";\n' });
    pkg('esm-pkg', { type: 'module', main: 'index.js' }, { 'index.js': 'export const esm = "esm";\n' });
    pkg('dual-pkg', { exports: { import: './index.mjs', require: './index.cjs' } }, { 'index.mjs': 'export const dual = "import";\n', 'index.cjs': 'exports.dual = "require";\n' });
    // A stand-in for asl-validator (LAZY_EXPORTS: its default export), which says when it is loaded.
    pkg('asl-validator', { main: 'index.js' }, { 'index.js': 'globalThis.validatorLoaded = true;\nmodule.exports = (definition) => `valid ${definition}`;\n' });
    // And for the Lambda client (LAZY_EXPORTS: classes), loaded at the first `new`, whose instances are its own class's.
    pkg('@aws-sdk/client-lambda', { main: 'index.js' }, { 'index.js': 'globalThis.lambdaLoaded = true;\nexports.InvokeCommand = class InvokeCommand { constructor(input) { this.input = input; } };\n' });
    write(
      ENTRIES.cli,
      [
        "import { named } from 'cjs-pkg';",
        "import { esm } from 'esm-pkg';",
        "import { dual } from 'dual-pkg';",
        "import validate from 'asl-validator';",
        "import { InvokeCommand } from '@aws-sdk/client-lambda';",
        'const loadedBefore = globalThis.validatorLoaded === true;',
        'const lambdaBefore = globalThis.lambdaLoaded === true;',
        "const command = new InvokeCommand({ FunctionName: 'f' });",
        "const { later } = await import('cjs-lazy');",
        "const same = (await import('cjs-pkg' + '')).named === named;",
        'console.log(named.from, same, esm, dual, later, loadedBefore, validate("x"), globalThis.validatorLoaded);',
        'console.log(lambdaBefore, command.input.FunctionName, command instanceof InvokeCommand, command.constructor.name, {} instanceof InvokeCommand);',
        '',
      ].join('\n'),
    );
    expect(await start()).toBe('cjs true esm import later false valid x true\nfalse f true InvokeCommand false');
    const bundled = bundleText(join(cache, builds(cache)[0]!));
    expect(bundled).toMatch(/createRequire\("[^"]*\/package\.json"\)\("cjs-pkg"\)/);
    expect(bundled).not.toMatch(/from "cjs-pkg"/);
    expect(bundled).toMatch(/from "esm-pkg"/);
    expect(bundled).toMatch(/from "dual-pkg"/);
    expect(bundled).toMatch(/import\("cjs-lazy"\)/);
  });

  it("this project's bundle: the local engine (aws-local-stepfunctions) inlined, the AWS SDK's clients required, the engine's definition validator loaded only if called", async () => {
    const bundled = bundleText((await cliBundle()).dir);
    expect(bundled).toMatch(/^\/\/ \S*node_modules\/aws-local-stepfunctions\/build\/main\.node\.esm\.js$/m);
    expect(bundled).not.toMatch(/from "(aws-local-stepfunctions|asl-validator|@aws-sdk\/[^"]+|@smithy\/[^"]+)"/);
    expect(bundled).toMatch(/\)\("@aws-sdk\/client-sfn"\)/);
    expect(bundled).toMatch(/function \w+\(\.\.\.args\) \{\n\s*return \(\w+ \?\?= [^\n]*\("asl-validator"\)\)\(\.\.\.args\);/);
    // The engine's Lambda client (for a real Lambda, which the local engine never invokes): loaded at its first `new`.
    expect(bundled).toMatch(/Reflect\.construct\(\(\w+ \?\?= [^\n]*\("@aws-sdk\/client-lambda"\)\)\.LambdaClient, args\)/);
    expect(bundled).not.toMatch(/require_client_lambda/);
    // Node's built-ins read through process.getBuiltinModule, never imported statically: Node's ES module
    // of a built-in reads all its exports first (node:fs's streams, node:crypto's Web Crypto) at every start.
    const staticImports = [...bundled.matchAll(/(?:\bfrom|^\s*import)\s*"([^"]+)"/gm)].map((match) => match[1]!);
    expect(staticImports.length).toBeGreaterThan(0);
    expect(staticImports.filter((specifier) => isBuiltin(specifier))).toEqual([]);
    expect(bundled).toMatch(/process\.getBuiltinModule\("node:fs"\)/);
  });

  it("this project's bundle: zod's locales but English none of its code, each loaded from zod's own build at its first call, as zod's own", async () => {
    const { dir, entries } = await cliBundle();
    // Of zod's locales, English (zod's default, imported by its schemas) and the index that stands for the others.
    const locales = [...bundleText(dir).matchAll(/^\/\/ \S*node_modules\/zod\/v4\/locales\/(\S+)$/gm)].map((match) => match[1]);
    expect([...new Set(locales)].sort()).toEqual(['en.js', 'index.js']);
    const script = [
      `const z = await import(${JSON.stringify(pathToFileURL(entries['zod']!).href)});`,
      "const message = () => z.string().min(3).safeParse('a').error.issues[0].message;",
      'const english = message();',
      'z.config(z.locales.fr());',
      'const french = message();',
      'z.config(z.core.locales.en());',
      'console.log(JSON.stringify([english, french, message(), Object.keys(z.locales).sort(), z.locales.en === z.core.locales.en]));',
    ].join('\n');
    const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', script], { timeout: 60_000 });
    const [english, french, englishAgain, names, sameEnglish] = JSON.parse(stdout) as [string, string, string, string[], boolean];
    const zodLocales = await import('zod/v4/locales');
    expect(names).toEqual(Object.keys(zodLocales).sort());
    expect(english).toBe('Too small: expected string to have >=3 characters');
    expect(french).toBe(zodLocales.fr().localeError({ code: 'too_small', origin: 'string', minimum: 3, inclusive: true, input: 'a' } as never));
    expect(french).not.toBe(english);
    expect(englishAgain).toBe(english);
    expect(sameEnglish).toBe(true);
  });
});

describe('an agent outside the repository, run by the bundled CLI', { timeout: 120_000 }, () => {
  it('imports savepoint from the CLI bundle itself (one instance of the harness) and runs to the end', async () => {
    // The README's agent and its dev module (found beside it by the CLI).
    const files = Object.entries(readmeFiles()).filter(([name]) => /^my-agent(\.dev)?\.ts$/.test(name));
    expect(files.map(([name]) => name)).toEqual(['my-agent.ts', 'my-agent.dev.ts']);
    const file = 'my-agent.ts';
    const dir = join(work, 'agent');
    mkdirSync(dir);
    for (const [name, code] of files) writeFileSync(join(dir, name), code);
    const { stdout } = await exec(process.execPath, [join(ROOT, 'bin', 'savepoint.js'), 'run', '--agent', join(dir, file), '--input', '{"inbox":"team"}', '--memory', '--approve', 'approve', '--json'], {
      // From the project (the synth finds its lock file there): the agent is what lives elsewhere.
      cwd: ROOT,
      timeout: 120_000,
      env: { ...process.env, SAVEPOINT_FROM_SOURCE: '' },
    });
    expect(JSON.parse(stdout)).toMatchObject({ agent: 'inbox-notes', status: 'succeeded', tools: { save_note: { ok: 1, guarantee: 'exactly-once' } } });

    // No node_modules near the agent: its bundle is kept in the CLI's cache, and `savepoint` is the CLI bundle's entry;
    // so is zod, which its bundle would import from the CLI's own node_modules (bin/bundle.js BUNDLED_PACKAGES: one instance).
    const cache = process.env['SAVEPOINT_BUNDLE_CACHE'] || join(ROOT, 'node_modules', '.cache', 'savepoint');
    // The newest first: the bundle this run made (a cache may keep older builds of the same agent).
    const bundled = readdirSync(cache)
      .filter((name) => name.startsWith('agent-'))
      .sort((a, b) => statSync(join(cache, b, 'agent.js')).mtimeMs - statSync(join(cache, a, 'agent.js')).mtimeMs)
      .map((name) => readFileSync(join(cache, name, 'agent.js'), 'utf8'))
      .filter((text) => text.includes('inbox-notes'));
    expect(bundled.length).toBeGreaterThan(0);
    expect(bundled[0]).toMatch(/from "file:\/\/[^"]*\/cli-[0-9a-f]+\/lambdas\/index\.js"/);
    expect(bundled[0]).toMatch(/from "file:\/\/[^"]*\/cli-[0-9a-f]+\/packages\/zod\.js"/);
    expect(bundled[0]).not.toMatch(/from "zod"/);
  });

  it("forks a run of an agent given by its path without --agent; reports it, once the agent no longer compiles, without the agent's own summary, saying why; named with --agent, that agent's error is the command's", async () => {
    const dir = join(work, 'no-longer-compiles');
    mkdirSync(dir);
    for (const [name, code] of Object.entries(readmeFiles()).filter(([name]) => /^my-agent(\.dev)?\.ts$/.test(name))) writeFileSync(join(dir, name), code);
    const savepoint = (...args: string[]) =>
      exec(process.execPath, [join(ROOT, 'bin', 'savepoint.js'), '--state-dir', join(dir, 'state'), ...args], { cwd: dir, timeout: 60_000, env: { ...process.env, SAVEPOINT_FROM_SOURCE: '' } }).then(
        ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
    const ran = await savepoint('run', '--agent', './my-agent.ts', '--input', '{"inbox":"team"}', '--approve', 'approve', '--json');
    expect(ran.code, ran.stderr).toBe(0);
    const runId = (JSON.parse(ran.stdout) as { runId: string }).runId;
    // The run records its agent's name; the state directory, the module it ran from (as `resume` and `replay` find it).
    const forked = await savepoint('fork', runId, '--at', '2', '--effects', 'dry', '--yes', '--approve', 'approve', '--json');
    expect(forked.code, forked.stderr).toBe(0);
    expect(JSON.parse(forked.stdout)).toMatchObject({ runId: `${runId}-fork-2`, agent: 'inbox-notes', status: 'succeeded' });
    writeFileSync(join(dir, 'my-agent.ts'), `${readFileSync(join(dir, 'my-agent.ts'), 'utf8')}\nexport const broken = ;\n`);
    const compileError = /does not compile:\n {2}\S*my-agent\.ts:\d+:\d+: Unexpected ";"/;

    const status = await savepoint('status', runId, '--json');
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ runId, agent: 'inbox-notes', status: 'succeeded' });
    expect(status.stderr).toMatch(/^savepoint: agent inbox-notes does not load here, so the report goes without its own summary: agent \S+ does not compile:/);
    expect(status.stderr).toMatch(compileError);
    // Said once, and nothing of the API's error (an answer of 500 was "savepoint: internal error").
    expect(status.stderr.match(/does not load here/g)).toHaveLength(1);
    expect(status.stderr).not.toMatch(/internal error|"level":"ERROR"/);

    const named = await savepoint('status', runId, '--agent', './my-agent.ts');
    expect(named).toMatchObject({ code: 1, stdout: '' });
    expect(named.stderr).toMatch(compileError);
    expect(named.stderr).not.toMatch(/internal error|"level":"ERROR"/);
  });

  it('names the agent, and the file, line and column in its code, of an error its module throws as it loads: from its bundle (source-mapped) and from its source', async () => {
    const file = join(work, 'throwing-agent.ts');
    writeFileSync(file, "const settings = process.env['NO_SUCH_SETTING'] as unknown as { url: string };\nexport const url = settings.url;\n");
    for (const fromSource of ['', '1']) {
      const failed = await exec(process.execPath, [join(ROOT, 'bin', 'savepoint.js'), 'run', '--agent', file, '--memory'], { env: { ...process.env, SAVEPOINT_FROM_SOURCE: fromSource } }).catch((error: { code: number; stderr: string }) => error);
      expect(failed).toMatchObject({ code: 1 });
      expect((failed as { stderr: string }).stderr, `SAVEPOINT_FROM_SOURCE=${fromSource}`).toBe(`savepoint: agent ${file} failed to load: Cannot read properties of undefined (reading 'url') (at ${file}:2:29)\n`);
    }
  });

  it('refuses, before anything is made, to serve an agent with no scripted model (the README\'s digest: no dev module), saying what to add', async () => {
    const dir = join(work, 'no-dev-module');
    mkdirSync(dir);
    for (const [name, code] of Object.entries(readmeFiles()).filter(([name]) => /^(my-agent(\.dev)?|digest)\.ts$/.test(name))) writeFileSync(join(dir, name), code);
    const refused = await exec(process.execPath, [join(ROOT, 'bin', 'savepoint.js'), '--state-dir', join(dir, 'state'), 'serve', '--agent', './my-agent.ts', '--agent', './digest.ts'], { cwd: dir, env: { ...process.env, SAVEPOINT_FROM_SOURCE: '' } }).catch((error: { code: number; stderr: string }) => error);
    expect(refused).toMatchObject({ code: 2, stderr: 'savepoint: agent inbox-digest has no scripted model (dev.policy) to run locally: give it a dev module beside its module (<module>.dev.ts: export default withDev(agent, { policy }); see docs/writing-an-agent.md)\n' });
    expect(existsSync(join(dir, 'state'))).toBe(false);
  });

  it("names the place in the agent's code of an error its prompt throws, when the run does not start", async () => {
    const dir = join(work, 'throwing-prompt');
    mkdirSync(dir);
    for (const [name, code] of Object.entries(readmeFiles()).filter(([name]) => /^my-agent(\.dev)?\.ts$/.test(name))) writeFileSync(join(dir, name), code);
    const agent = readFileSync(join(dir, 'my-agent.ts'), 'utf8');
    const prompt = /prompt: \(input\) => .*,$/m.exec(agent)!;
    writeFileSync(join(dir, 'my-agent.ts'), agent.replace(prompt[0], "prompt: () => { throw new Error('no prompt today'); },"));
    const line = agent.slice(0, prompt.index).split('\n').length;
    const failed = await exec(process.execPath, [join(ROOT, 'bin', 'savepoint.js'), 'run', '--agent', './my-agent.ts', '--input', '{"inbox":"team"}', '--memory'], { cwd: dir, env: { ...process.env, SAVEPOINT_FROM_SOURCE: '' } }).catch((error: { code: number; stderr: string }) => error);
    expect(failed).toMatchObject({ code: 1 });
    expect((failed as { stderr: string }).stderr).toMatch(new RegExp(`^savepoint: run \\S+ did not start: Error: no prompt today \\(at ${join(dir, 'my-agent.ts').replaceAll('.', '\\.')}:${line}:\\d+\\)$`, 'm'));
  });

  it('names the file, line and column of an agent that does not compile', async () => {
    const file = join(work, 'broken-agent.ts');
    writeFileSync(file, "import { defineAgent } from 'savepoint';\nexport default defineAgent({ name: 'x', \n");
    const failed = await exec(process.execPath, [join(ROOT, 'bin', 'savepoint.js'), 'run', '--agent', file, '--memory'], { env: { ...process.env, SAVEPOINT_FROM_SOURCE: '' } }).catch((error: { code: number; stderr: string }) => error);
    expect(failed).toMatchObject({ code: 1 });
    expect((failed as { stderr: string }).stderr).toContain(`savepoint: agent ${file} does not compile:\n  ${file}:3:1: Expected identifier but found end of file`);
  });
});
