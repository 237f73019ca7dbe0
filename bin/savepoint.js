#!/usr/bin/env node
// The savepoint CLI. It runs a bundle of its TypeScript sources, built by esbuild on the first
// start after a change and cached (bin/bundle.js): a start without loader hooks, in a fraction of
// the time. SAVEPOINT_FROM_SOURCE=1 runs the sources themselves through tsx (for debugging);
// so does a project whose bundle cannot be built or kept (e.g. a read-only install).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const fromSource = Boolean(process.env.SAVEPOINT_FROM_SOURCE) && process.env.SAVEPOINT_FROM_SOURCE !== '0';
const bundle = fromSource ? undefined : await bundled();
if (bundle) {
  const { pathToFileURL } = await import('node:url');
  // How local/agents.ts loads an agent when the harness is this bundle: bundled against it.
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

async function bundled() {
  try {
    const { cliBundle } = await import('./bundle.js');
    return await cliBundle();
  } catch (error) {
    if (process.env.SAVEPOINT_BUNDLE_DEBUG) process.stderr.write(`savepoint: running from source, no bundle: ${error?.stack ?? error}\n`);
    return undefined;
  }
}
