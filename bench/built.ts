import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The built harness (dist/, `node bin/build.js`) as a benchmark runs it: the code an installed
 * package runs, not the TypeScript sources through tsx (whose keepNames wraps every function in a
 * `__name` call, a cost no user's process pays). A build older than the sources would measure
 * other code than the checkout's, and is refused.
 */

/** The checkout: dist/ is built beside the sources. */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The source directories whose built modules a benchmark may run (the harness, the local stack, the simulators, the client). */
export const HARNESS_SOURCES = ['lambdas', 'local', 'sim', 'client'];

/** The built module of source `path` (relative to the checkout, `.js`), typed as the source; refused while dist/ is stale (staleBuilds). */
export async function builtModule<T>(path: string): Promise<T> {
  checked ??= refuseStale();
  checked();
  return (await import(pathToFileURL(join(ROOT, 'dist', path)).href)) as T;
}
let checked: (() => void) | undefined;

function refuseStale(): () => void {
  const stale = staleBuilds(HARNESS_SOURCES);
  const problem = stale.length === 0 ? undefined : `dist/ is not built from these sources (${stale.slice(0, 3).join(', ')}${stale.length > 3 ? `, … ${stale.length} files` : ''}): run node bin/build.js first`;
  return () => {
    if (problem) throw new Error(problem);
  };
}

/** The TypeScript sources under `dirs` (of `root`) whose dist/ module is missing or older than them. */
export function staleBuilds(dirs: readonly string[], root = ROOT): string[] {
  const stale: string[] = [];
  for (const dir of dirs) {
    for (const entry of readdirSync(join(root, dir), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.d.ts')) continue;
      const source = join(entry.parentPath, entry.name);
      const path = relative(root, source);
      const built = statSync(join(root, 'dist', path.replace(/\.ts$/, '.js')), { throwIfNoEntry: false });
      if (!built || built.mtimeMs < statSync(source).mtimeMs) stale.push(path);
    }
  }
  return stale;
}
