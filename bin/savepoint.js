#!/usr/bin/env node
// The savepoint CLI. Installed from npm, it runs the compiled CLI (dist/), and compiles a
// TypeScript agent with esbuild on its first start after a change (bin/bundle.js, cached); a
// JavaScript agent is imported as it is. In a checkout of savepoint (the sources beside this
// file) it runs a bundle of the TypeScript sources, built by esbuild on the first start after a
// change and cached: a start without loader hooks, in a fraction of the time.
// SAVEPOINT_FROM_SOURCE=1 runs the sources themselves through tsx (for debugging); so does a
// checkout whose bundle cannot be built or kept.
import { existsSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';


const checkout = existsSync(new URL('../cli/savepoint.ts', import.meta.url));
if (!checkout) {
  keepCompiledCode();
  // How local/runtime/agents.ts loads an agent: compiled on its own, its `savepoint` imports left to Node.
  globalThis[Symbol.for('savepoint.bundle')] = {
    importAgent: async (modulePath) => {
      if (/\.[cm]?js$/.test(modulePath)) return import(pathToFileURL(modulePath).href);
      const { agentBundle } = await import('./bundle.js');
      return import(pathToFileURL(await agentBundle(modulePath, undefined)).href);
    },
  };
  await import('../dist/cli/savepoint.js');
} else {
  const fromSource = Boolean(process.env.SAVEPOINT_FROM_SOURCE) && process.env.SAVEPOINT_FROM_SOURCE !== '0';
  const bundle = fromSource ? undefined : await bundled();
  if (bundle) {
    keepCompiledCode();
    // How local/runtime/agents.ts loads an agent when the harness is this bundle: bundled against it.
    globalThis[Symbol.for('savepoint.bundle')] = {
      dir: bundle.dir,
      importAgent: async (modulePath) => {
        const { agentBundle } = await import('./bundle.js');
        return import(pathToFileURL(await agentBundle(modulePath, bundle)).href);
      },
    };
    await import(pathToFileURL(bundle.entries.cli).href);
  } else {
    const { register } = await import('tsx/esm/api');
    register();
    await import('../cli/savepoint.ts');
  }
}

async function bundled() {
  try {
    const { cliBundle } = await import('./bundle.js');
    return await cliBundle();
  } catch (error) {
    if (process.env.SAVEPOINT_BUNDLE_DEBUG) process.stderr.write(`savepoint: running from source, no bundle: ${error?.stack ?? error}\n`);
    return undefined;
  }
}

/**
 * Node's compile cache (node:module enableCompileCache): the code each start compiles (the CLI, its
 * dependencies, the agent's bundle) is kept compiled for the next one, about a tenth of a short
 * command's CPU. Kept beside the package's other caches, inside the install that owns them (not a
 * directory other users share, such as the default under os.tmpdir()); where it cannot be written,
 * nothing is cached and nothing fails. NODE_DISABLE_COMPILE_CACHE=1 turns it off. Not when the
 * sources run through tsx (SAVEPOINT_FROM_SOURCE), which caches nothing.
 */
function keepCompiledCode() {
  const cache = process.env.SAVEPOINT_BUNDLE_CACHE ? `${process.env.SAVEPOINT_BUNDLE_CACHE}/compile` : fileURLToPath(new URL('../node_modules/.cache/savepoint/compile', import.meta.url));
  module.enableCompileCache?.(cache);
}
