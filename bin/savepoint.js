#!/usr/bin/env node
// The savepoint CLI. Installed from npm, it runs the compiled CLI (dist/), and compiles a
// TypeScript agent with esbuild on its first start after a change (bin/bundle.js, cached); a
// JavaScript agent is imported as it is. In a checkout of savepoint (the sources beside this
// file) it runs a bundle of the TypeScript sources, built by esbuild on the first start after a
// change and cached: a start without loader hooks, in a fraction of the time.
// SAVEPOINT_FROM_SOURCE=1 runs the sources themselves through tsx (for debugging); so does a
// checkout whose bundle cannot be built or kept.
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const checkout = existsSync(new URL('../cli/savepoint.ts', import.meta.url));
if (!checkout) {
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
