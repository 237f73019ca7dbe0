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
 * The commands that run once through much of what they load, each with what it loads before V8's
 * flags for them change, and the flags, set before anything else is compiled. `savepoint replay` runs the steps of a whole run (~100 agent steps for
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
 * - --semi-space-growth-factor=1: the young generation kept at the size it has when the flags are
 *   set (a semi-space of 1 MB), not doubled at each scavenge (to 8 MB for the sample day). A
 *   replay scavenges more often (~22 times
 *   for the sample day, not 9: +1.6% instructions), but in memory that stays in the CPU's caches
 *   and that the kernel mapped once: ~1.6k fewer page faults, ~5 ms less CPU (60 pairs; the same
 *   for a run of 169 steps). A young generation let grow instead (=16: 3 scavenges, -6% instructions)
 *   saved nothing: its new pages cost the kernel what the scavenges saved. A replay of a longer
 *   run pays for it: 1,001 steps +40 ms of CPU (~290), 2,001 steps +75-100 ms (~730), 401 steps
 *   -2 to -3 ms (10 pairs each, 2026-12-07, load 2-5); the factor set back to 2 once the run's
 *   record is read (v8.setFlagsFromString) measured the same as no flag there: so a replay of a run
 *   of more than 500 steps sets it back (cli/replay-heap.ts; 1,001 steps 340 -> 292 ms, 2,001 765 ->
 *   690, the sample day unchanged: 8 alternated pairs each, load 0.6-0.7). Not for the run
 *   commands, whose run may be long: a long run scavenges far more often in 1 MB, copying what
 *   it still holds each time, and promotes it sooner (more major GCs), at a cost well above a
 *   replay's. A run of 401 steps (a read tool called once a turn) 41 -> 502 scavenges, GC 47 ->
 *   300 ms, CPU +180-240 ms of ~1.2 s; of 2,001 steps 526 -> 8,811 scavenges, 2 -> 10 major GCs,
 *   CPU 8.6 -> 12.8 s, peak RSS 204 -> 300 MB. A run of 3 steps,
 *   the sample day, a resume or a fork of a small run: -5 to +8 ms of CPU (noise), peak RSS 102
 *   -> 93 MB and 126 -> 103 (10-12 alternated pairs each, medians, 2026-12-07, load 1-6). V8's
 *   default factor is 2; a cap on the young generation (--max-semi-space-size) holds only from
 *   Node's command line, where 4 or 8 MB cost +25 ms of CPU for 3 steps and +1-2.7 s for 2,001.
 * - `savepoint run`, and `resume` and `fork`, which run a run's steps as it does (cli/commands/run.ts
 *   runAndReport): the CLI's code and the local stack's, read once at the start and each called a few
 *   times, are its CPU much as they are the replay's. With Node's built-ins it loads (loadRunBuiltins)
 *   loaded before the flags change (else ~125 of Node's modules compiled from their source: +3-5% of its CPU):
 *   a run of 3 steps (test/cli/fixtures/held-note.ts: most of the tests' runs are so small) 290 ->
 *   250 ms of CPU with --no-lazy alone, as with both flags (10 pairs alternated, medians). --no-lazy
 *   alone, not --no-turbofan: on a run of 125 steps (the most the sample agent's budgets allow) both
 *   flags took 0.58-0.61 s of CPU against 0.66-0.71 s and 0.58-0.59 s of wall time against
 *   0.53-0.61 (the run's own thread, unoptimised, slower than the compiles it saves on V8's
 *   threads), --no-lazy alone 0.61-0.63 s of CPU and 0.49-0.52 s of wall time (5 rounds alternated,
 *   2026-12-06, load 2-3); and a run may be long, where optimised code pays.
 *   Those built-ins loaded first with the default flags: unchanged.
 * Not the other commands: a command that calls little of what it loads (`status`) reads more code
 * than it runs, and a server (`serve`) runs long.
 */
const ONE_PASS_COMMANDS = new Map([
  // Node's built-ins the replay loads in any case.
  ['replay', { loadFirst: () => loadBuiltins(['node:crypto', 'node:net', 'node:os']), flags: ['--no-lazy', '--no-turbofan', '--semi-space-growth-factor=1'] }],
  ['run', { loadFirst: loadRunBuiltins, flags: ['--no-lazy'] }],
  ['resume', { loadFirst: loadRunBuiltins, flags: ['--no-lazy'] }],
  ['fork', { loadFirst: loadRunBuiltins, flags: ['--no-lazy'] }],
]);

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
  // bin/bundle.js compileCacheDir (not imported yet: its own code is cached too), which empties it when a build goes.
  const cache = process.env.SAVEPOINT_BUNDLE_CACHE ? `${process.env.SAVEPOINT_BUNDLE_CACHE}/compile` : fileURLToPath(new URL('../node_modules/.cache/savepoint/compile', import.meta.url));
  if (!module.enableCompileCache) return;
  // Before the cache is on: Node keeps the code of each set of V8 flags in a directory of its own.
  const onePass = ONE_PASS_COMMANDS.get(commandWord(process.argv));
  if (onePass) setOnePassFlags(onePass);
  const { status } = module.enableCompileCache(cache);
  const { ENABLED, ALREADY_ENABLED } = module.constants.compileCacheStatus;
  // Without a cache, --no-lazy would compile everything at every start.
  if (onePass && status !== ENABLED && status !== ALREADY_ENABLED) process.getBuiltinModule('node:v8').setFlagsFromString('--lazy');
}

/** A one-pass command's V8 flags, set once it has loaded its built-ins (ONE_PASS_COMMANDS). */
function setOnePassFlags({ loadFirst, flags }) {
  // Node's built-ins loaded before the flags change: their compiled copy in Node's binary is of the
  // default flags, and one loaded after would be compiled from its source.
  loadFirst();
  const v8 = process.getBuiltinModule('node:v8');
  for (const flag of flags) v8.setFlagsFromString(flag);
}

function loadBuiltins(names) {
  for (const name of names) process.getBuiltinModule(name);
}

/**
 * Node's built-ins `savepoint run` loads (those process.moduleLoadList adds by its exit, for a run of
 * 3 steps and for the sample day; the same for `fork`), in the order it loads them: the local stack's
 * servers, the AWS SDK's clients and the engine's. A built-in left out costs its compile, not
 * correctness; one named here that a run no longer loads costs its load.
 */
function loadRunBuiltins() {
  loadBuiltins(['node:stream', 'node:crypto', 'node:os', 'node:net', 'node:vm', 'node:stream/web', 'node:timers/promises', 'node:fs/promises', 'node:tls', 'node:https', 'node:assert', 'node:http', 'node:http2', 'node:zlib', 'node:perf_hooks', 'node:readline/promises', 'node:dns', 'node:dgram', 'node:child_process', 'node:cluster', 'node:util/types', 'node:worker_threads', 'node:tty']);
  // And what Node loads at its first use: fetch's classes (undici, the largest of them), Web Crypto,
  // the file streams, AsyncLocalStorage's implementation, File.
  void [globalThis.Headers, globalThis.crypto, globalThis.File, process.getBuiltinModule('node:fs').ReadStream, process.getBuiltinModule('node:async_hooks').AsyncLocalStorage];
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
