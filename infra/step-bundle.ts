import type { ILocalBundling } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `.ts` in a checkout of savepoint, `.js` in the installed package (dist/). */
const FROM_SOURCE = import.meta.url.endsWith('.ts');
/** A module of lambdas/ (`handlers/call-model`), as this copy of savepoint has it: its source in a checkout, its build in dist/. */
export const lambdasModule = (path: string) => fileURLToPath(new URL(`../lambdas/${path}${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url));
const adapter = (name: string) => lambdasModule(`adapters/${name}`);
/** Stack traces mapped to the sources when first formatted (lambdas/adapters/lazy-source-maps.ts), not every map parsed at each cold start. */
const LAZY_SOURCE_MAPS = adapter('lazy-source-maps');
/** `node:http` without Node's ESM facade, which loads undici at each cold start (lambdas/adapters/http-module.ts). */
const HTTP_MODULE = adapter('http-module');
/** `node:http2` loaded on first use: the SDK's HTTP/2 handler imports it, no step uses it (lambdas/adapters/http2-module.ts). */
const HTTP2_MODULE = adapter('http2-module');

/**
 * The module `@savepoint/agents-entry` is bundled as: every agent's definition, in the order the
 * stack added them (lambdas/adapters/stack-api.ts serves each by its name).
 */
export function agentsEntrySource(entries: readonly string[]): string {
  const imports = entries.map((entry, index) => `import agent${index} from ${JSON.stringify(entry)};`);
  return `${imports.join('\n')}\nexport default [${entries.map((_, index) => `agent${index}`).join(', ')}];\n`;
}

/** The agent code bundled into a step's handler: one agent's module, every agent's of the stack, or none. */
export type BundledAgents = { readonly agentEntry: string } | { readonly agentEntries: readonly string[] } | Record<string, never>;

/**
 * One esbuild build of several handlers bundled with the same agent code: each handler is an entry
 * point, and what they share is parsed once and written once, as chunks each function's asset
 * copies. Building a function's handler alone parsed the AWS SDK, the ledger and the agent again
 * for every function of a stack (up to nine a DurableAgent): the builds of them together take
 * about a fifth of esbuild's CPU (docs/package.md, "One build per kind of function").
 */
interface SharedBuild {
  /** Each handler's file, by its entry's output path. */
  readonly entries: ReadonlyMap<string, string>;
  /** Every file the build wrote (chunks, source maps), by its absolute path under `outdir`. */
  readonly files: ReadonlyMap<string, Uint8Array>;
  /** The files each output imports, statically or on first use. */
  readonly imports: ReadonlyMap<string, readonly string[]>;
  readonly outdir: string;
}

/**
 * The builds of one app's synthesis, by the agent code they bundle: an app is synthesized once,
 * and a second app (or a second synthesis of a changed agent in the same process) builds anew.
 */
const buildsOfApp = new WeakMap<IConstruct, Map<string, SharedBuild>>();

/**
 * One step's bundle, built by the local esbuild (an optional peer of savepoint/cdk) with code
 * splitting, which NodejsFunction cannot do (it always writes one `--outfile`): a module the step
 * imports only when it needs it — a model provider's SDK (lambdas/models/index.ts) — is a chunk of
 * its own, loaded on the first call to that provider, so a cold start parses only the SDK it uses.
 * The asset holds the step's entry (`index.mjs`) and the chunks it imports, from the build it
 * shares with `bundledWith`. Its public fields are part of the asset's cache key (CDK hashes the
 * bundling options as JSON), so two functions never share a bundle by accident.
 */
export class StepBundle implements ILocalBundling {
  readonly #builds: Map<string, SharedBuild>;

  constructor(
    scope: IConstruct,
    /** The step's handler file. */
    readonly entry: string,
    readonly agents: BundledAgents,
    /** The handlers built in the same esbuild build (this one's included or not). */
    readonly bundledWith: readonly string[],
  ) {
    const root = scope.node.root;
    let builds = buildsOfApp.get(root);
    if (!builds) buildsOfApp.set(root, (builds = new Map()));
    this.#builds = builds;
  }

  tryBundle(outputDir: string): boolean {
    const key = JSON.stringify(this.agents);
    let build = this.#builds.get(key);
    // A handler the build lacks (a family named differently by another construct): built again with it.
    if (!build || ![...build.entries.values()].includes(this.entry)) {
      build = buildHandlers([...new Set([...(build?.entries.values() ?? []), ...this.bundledWith, this.entry])], this.agents);
      this.#builds.set(key, build);
    }
    writeStep(build, this.entry, outputDir);
    return true;
  }
}

function buildHandlers(handlers: readonly string[], agents: BundledAgents): SharedBuild {
  if (!('agentEntries' in agents)) return esbuildHandlers(handlers, 'agentEntry' in agents ? { '@savepoint/agent-entry': agents.agentEntry } : {});
  // esbuild's synchronous build takes no plugins (no virtual module): the module is a file of its own, beside no project file.
  const dir = mkdtempSync(join(tmpdir(), 'savepoint-agents-'));
  try {
    const entry = join(dir, 'agents-entry.ts');
    writeFileSync(entry, agentsEntrySource(agents.agentEntries));
    return esbuildHandlers(handlers, { '@savepoint/agents-entry': entry });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function esbuildHandlers(handlers: readonly string[], aliases: Record<string, string>): SharedBuild {
  let esbuild: typeof import('esbuild');
  try {
    esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  } catch (error) {
    throw new Error('savepoint/cdk bundles the step functions with esbuild, an optional peer dependency: npm install -D esbuild', { cause: error });
  }
  // Kept in memory (`write: false`): each function's asset takes its files from here.
  const outdir = join(tmpdir(), 'savepoint-step-bundles');
  const result = esbuild.buildSync({
    entryPoints: handlers.map((handler, index) => ({ in: handler, out: `entry-${index}` })),
    outdir,
    write: false,
    metafile: true,
    bundle: true,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    // A Lambda directory has no package.json: every file of an ESM bundle is `.mjs`.
    outExtension: { '.js': '.mjs' },
    format: 'esm',
    platform: 'node',
    target: 'node24',
    // Minified, with each file's source map beside it (not inlined): less to load on each cold start.
    minify: true,
    keepNames: true,
    sourcemap: 'linked',
    // The maps hold positions and names, not the sources themselves: a stack's frames need only
    // those, and the sources were most of each asset's bytes (an app's cdk.out ~3× larger).
    sourcesContent: false,
    // Not Node's --enable-source-maps, which parses every file's map as it loads (~27 ms of a
    // step's ~125 ms import): the bundle maps a stack's frames when a stack is first formatted.
    inject: [LAZY_SOURCE_MAPS],
    // The AWS SDK bundled in, not taken from the runtime: one minified file imports in about half
    // the CPU of the runtime's SDK packages (npm run bench -- --cold-start), and the clients are
    // the versions this package was tested with.
    external: [],
    mainFields: ['module', 'main'],
    // `module` picks the SDK's ES modules (dist-es), which esbuild tree-shakes, over its CommonJS
    // build: esbuild adds it on its own only when no other condition is named. In a checkout,
    // `savepoint` resolves to its sources (package.json `exports`, condition `savepoint-source`).
    conditions: FROM_SOURCE ? ['savepoint-source', 'module'] : ['module'],
    // The handler's `@savepoint/agent-entry` is this function's agent. Agents import the public
    // API by the package's name (`savepoint`, `savepoint/sim`), which esbuild resolves through
    // the package's `exports` (a dependency, or this package itself).
    alias: { http: HTTP_MODULE, 'node:http': HTTP_MODULE, http2: HTTP2_MODULE, 'node:http2': HTTP2_MODULE, ...aliases },
    // Some CommonJS dependencies call require(); ESM bundles need it defined.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  // The metafile names outputs relative to the working directory; the files, absolutely.
  const outputs = Object.entries(result.metafile.outputs).map(([path, output]) => [resolve(path), output] as const);
  return {
    outdir,
    entries: new Map(handlers.map((handler, index) => [join(outdir, `entry-${index}.mjs`), handler])),
    files: new Map(result.outputFiles.map((file) => [file.path, file.contents])),
    imports: new Map(outputs.map(([path, output]) => [path, output.imports.filter((used) => !used.external).map((used) => resolve(used.path))])),
  };
}

/** The handler's entry as `index.mjs`, and every chunk it loads (at once or on first use), each with its map. */
function writeStep(build: SharedBuild, handler: string, outputDir: string): void {
  const entry = [...build.entries].find(([, file]) => file === handler)![0];
  const needed = new Set<string>();
  const visit = (path: string) => {
    if (needed.has(path)) return;
    needed.add(path);
    for (const used of build.imports.get(path) ?? []) visit(used);
  };
  visit(entry);
  for (const path of needed) {
    const name = path === entry ? 'index.mjs' : relative(build.outdir, path);
    const target = join(outputDir, name);
    mkdirSync(dirname(target), { recursive: true });
    const code = build.files.get(path)!;
    // The entry's map is written as index.mjs.map: its link at the file's end names it so.
    writeFileSync(target, path === entry ? Buffer.from(code).toString('utf8').replace(/(\/\/# sourceMappingURL=)[^\n]*\s*$/, '$1index.mjs.map\n') : code);
    const map = build.files.get(`${path}.map`);
    if (map) writeFileSync(`${target}.map`, map);
  }
}
