#!/usr/bin/env node
// The savepoint CLI. It runs a bundle of itself, built by esbuild on the first start after a
// change and cached (bin/bundle.js): in a checkout of savepoint (the sources beside this file),
// of the TypeScript sources; installed from npm, of the compiled CLI (dist/), when esbuild (the
// optional peer that compiles TypeScript agents) is installed. A start without loader hooks and
// without Node resolving and loading the package's ~400 modules one by one. Agents are bundled
// against it (one instance of every harness module).
// SAVEPOINT_FROM_SOURCE=1 runs without the bundle (for debugging): a checkout's sources through
// tsx, an installed package's dist/ as it is; so does a package whose bundle cannot be built or
// kept (no esbuild, an install it may not write to).
// Built-ins as the CLI bundle reads them (bin/bundle.js BUILTIN_IMPORT), not Node's ES modules of them.
const { existsSync } = process.getBuiltinModule('node:fs');
const module = process.getBuiltinModule('node:module');
const { fileURLToPath, pathToFileURL } = process.getBuiltinModule('node:url');

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/**
 * The commands that run once through much of what they load, and V8's flags for them, set before
 * anything else is compiled. `savepoint replay` runs the steps of a whole run (~100 agent steps for
 * the sample day) in a process of ~150 ms of CPU (issue 38), where V8's defaults cost more than
 * they save:
 * - --no-lazy: every function of a module compiled with it, not only its top level. Node makes a
 *   module's compile cache as it compiles it, before it runs, so the cache held each module's top
 *   level and V8 compiled again, at every start, each function the command called: 11-13% of the
 *   replay's CPU, read from the cache instead (its first start after the bundle changes compiles
 *   all of it, ~+50%, once).
 * - --no-turbofan: the optimizing compiler's compiles (of the nine or so functions a replay makes
 *   hot) cost more than they save: 13-22% less CPU without it for the sample day and for a run of 163
 *   steps, and still 16-27% less over 10 and 30 replays of the sample day in one process
 *   (alternated, medians). Ignition and Sparkplug run everything.
 * Not the other commands: `savepoint run` loads ~80 of Node's built-ins after this point, each then
 * compiled from its source (Node's compiled copy is of the default flags: +3-5% of its CPU), a
 * command that calls little of what it loads (`status`) reads more code than it runs, and a
 * server (`serve`) runs long.
 */
const ONE_PASS_COMMANDS = new Set(['replay']);
const ONE_PASS_FLAGS = ['--no-lazy', '--no-turbofan'];

const checkout = existsSync(new URL('../cli/savepoint.ts', import.meta.url));
const fromSource = Boolean(process.env.SAVEPOINT_FROM_SOURCE) && process.env.SAVEPOINT_FROM_SOURCE !== '0';
// On before the bundle's check (bin/bundle.js), whose code is then kept compiled too.
if (!(fromSource && checkout)) keepCompiledCode();
const bundle = fromSource ? undefined : checkout || resolvable('esbuild') ? await bundled() : withoutBundle('esbuild is not installed');
if (bundle || !checkout) {
  // How local/runtime/agents.ts loads an agent: bundled against the CLI's bundle, so that the agent
  // and the harness share its modules; without one (dist/), a TypeScript agent compiled on its own
  // (its `savepoint` imports left to Node: the dist/ modules this CLI runs), a JavaScript one as it is.
  globalThis[Symbol.for('savepoint.bundle')] = {
    ...(bundle && { dir: bundle.dir }),
    importAgent: async (modulePath) => {
      if (!bundle && /\.[cm]?js$/.test(modulePath)) return import(pathToFileURL(modulePath).href);
      const { agentBundle } = await import('./bundle.js');
      return import(pathToFileURL(await agentBundle(modulePath, bundle)).href);
    },
  };
  await import(bundle ? pathToFileURL(bundle.entries.cli).href : '../dist/cli/savepoint.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../cli/savepoint.ts');
}

async function bundled() {
  try {
    const { cliBundle, resolveBundleImports } = await import('./bundle.js');
    const bundle = await cliBundle();
    resolveBundleImports(bundle.dir);
    return bundle;
  } catch (error) {
    return withoutBundle(error?.stack ?? error);
  }
}

/** No bundle this start; SAVEPOINT_BUNDLE_DEBUG=1 says why. */
function withoutBundle(why) {
  if (process.env.SAVEPOINT_BUNDLE_DEBUG) process.stderr.write(`savepoint: running without a bundle: ${why}\n`);
  return undefined;
}

/** Whether a package resolves from here (resolved, not loaded). */
function resolvable(name) {
  try {
    import.meta.resolve(name);
    return true;
  } catch {
    return false;
  }
}

/**
 * Node's compile cache (node:module enableCompileCache): the code each start compiles (the CLI, its
 * dependencies, the agent's bundle) is kept compiled for the next one, about a tenth of a short
 * command's CPU. Kept beside the package's other caches, inside the install that owns them (not a
 * directory other users share, such as the default under os.tmpdir()); where it cannot be written,
 * nothing is cached and nothing fails. NODE_DISABLE_COMPILE_CACHE=1 turns it off. Not when the
 * sources run through tsx (SAVEPOINT_FROM_SOURCE), which caches nothing (a checkout whose bundle
 * cannot be built runs them so with the cache on: it was on for the check).
 */
function keepCompiledCode() {
  const cache = process.env.SAVEPOINT_BUNDLE_CACHE ? `${process.env.SAVEPOINT_BUNDLE_CACHE}/compile` : fileURLToPath(new URL('../node_modules/.cache/savepoint/compile', import.meta.url));
  if (!module.enableCompileCache) return;
  // Before the cache is on: Node keeps the code of each set of V8 flags in a directory of its own.
  const onePass = ONE_PASS_COMMANDS.has(commandWord(process.argv)) && setOnePassFlags();
  const { status } = module.enableCompileCache(cache);
  const { ENABLED, ALREADY_ENABLED } = module.constants.compileCacheStatus;
  // Without a cache, --no-lazy would compile everything at every start.
  if (onePass && status !== ENABLED && status !== ALREADY_ENABLED) process.getBuiltinModule('node:v8').setFlagsFromString('--lazy');
}

/** ONE_PASS_FLAGS, set. */
function setOnePassFlags() {
  // Node's built-ins the command loads in any case, loaded before the flags change: their compiled
  // copy in Node's binary is of the default flags, and one loaded after would be compiled from its source.
  for (const builtin of ['node:crypto', 'node:net', 'node:os']) process.getBuiltinModule(builtin);
  const v8 = process.getBuiltinModule('node:v8');
  for (const flag of ONE_PASS_FLAGS) v8.setFlagsFromString(flag);
  return true;
}

/**
 * The command a command line names, read as cli/command-word.ts reads it (the first word past the
 * root options and their values; none once the root's help is asked for): only to choose how the
 * start compiles, so a word misread costs speed, not correctness (commander parses the line).
 */
function commandWord(argv) {
  for (let index = 2; index < argv.length; index += 1) {
    const word = argv[index];
    if (word === '--help' || word === '-h') return undefined;
    if (word === '--state-dir' || word === '--stack' || word === '--region') index += 1;
    else if (!word.startsWith('-')) return word;
  }
  return undefined;
}
