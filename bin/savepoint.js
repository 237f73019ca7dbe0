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
  module.enableCompileCache?.(cache);
}
