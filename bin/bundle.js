// The CLI's prebuilt bundle: the TypeScript sources bundled once by esbuild, cached by the content
// of what they were built from, and imported natively (no loader hooks, one instance of every
// module). Plain JavaScript: it runs before anything could compile TypeScript.
// Node's built-ins as `process.getBuiltinModule` returns them, not imported: the CLI bundle's own
// code reads them so too (BUILTIN_IMPORT), and an ES module import of one first makes Node's ES
// module of it, which reads all its exports (node:crypto's Web Crypto ones load ~10 more modules).
const { createHash, randomBytes } = process.getBuiltinModule('node:crypto');
const { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } = process.getBuiltinModule('node:fs');
const { createRequire, isBuiltin, registerHooks } = process.getBuiltinModule('node:module');
const { dirname, extname, join, relative, resolve, sep } = process.getBuiltinModule('node:path');
const { fileURLToPath, pathToFileURL } = process.getBuiltinModule('node:url');

export const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

/** This file's own text is part of every key: a bundle built with other options is another bundle. */
const FORMAT = readFileSync(fileURLToPath(import.meta.url), 'utf8');

/**
 * The public entry points (package.json `exports`) and the CLI, in a checkout's sources: code they
 * share lands in shared chunks, one module instance.
 */
const SOURCE_ENTRIES = { cli: 'cli/savepoint.ts', savepoint: 'lambdas/index.ts', 'savepoint/sim': 'sim/index.ts', 'savepoint/client': 'client/index.ts' };

/** The same entry points in an installed package, which ships them compiled (`dist/`) and no sources. */
const INSTALLED_ENTRIES = Object.fromEntries(Object.entries(SOURCE_ENTRIES).map(([name, entry]) => [name, `dist/${entry.replace(/\.ts$/, '.js')}`]));

/** The entry points a bundle of the package at `root` is built from: its sources in a checkout, else its compiled `dist/`. */
export function entriesOf(root) {
  return existsSync(join(root, SOURCE_ENTRIES.cli)) ? SOURCE_ENTRIES : INSTALLED_ENTRIES;
}

/** This package's entry points (entriesOf). */
export const ENTRIES = entriesOf(ROOT);

/**
 * Packages bundled into the CLI bundle, each an entry of its own (`packages/<name>.js`), instead of
 * left to Node: zod is ~95 modules, and Node resolving, reading and linking them one by one costs a
 * CLI start ~30 ms of CPU more than the same code in one file (issue 38: `savepoint replay`'s start).
 * An agent whose import of one would reach the same package imports the CLI bundle's entry (one
 * instance, as for `savepoint`). Only those installed beside the sources; the others stay external.
 */
export const BUNDLED_PACKAGES = ['zod'];

/**
 * Packages bundled into the CLI bundle's own code, and not shared with an agent (whose import of
 * one stays its own): commander, CommonJS in 7 files, cost every command's start ~5 ms of CPU in
 * Node's CommonJS loader and its scan of the exports (cjs-module-lexer) when left to Node. Their
 * files keep their functions' and classes' own names (esbuild's keepNames, applied to them alone):
 * the bundle renames what clashes (`CommanderError2`), and commander's errors name themselves after
 * their class (`this.name = this.constructor.name`). Only those installed beside the sources; the
 * others stay external.
 */
export const INLINED_PACKAGES = ['commander', 'aws-local-stepfunctions'];

/**
 * Imports of a CommonJS package's functions and classes that the CLI bundle makes lazy: each export
 * named is a function that loads the package (with `require`) at its first call; one named `new X`
 * is a class, which loads it at its first `new` (or `instanceof`). aws-local-stepfunctions (inlined)
 * imports them at its top, for what the local engine never asks of it on a known definition: the
 * definition's validation (asl-validator and its ajv, ~60 ms of CPU to load; the engine passes
 * `noValidate` for a definition it validated before: local/engine/versions.ts), Cognito credentials
 * for a real Lambda (~25 ms) and the Lambda client that invokes one (~9 ms after the Step Functions
 * client, whose @smithy modules it shares; the twin's Lambda API takes the same commands only when
 * the version pruner runs). Every engine process paid all three at its start.
 */
export const LAZY_EXPORTS = {
  'asl-validator': ['default'],
  '@aws-sdk/credential-providers': ['fromCognitoIdentityPool'],
  '@aws-sdk/client-lambda': ['new LambdaClient', 'new InvokeCommand', 'new ListVersionsByFunctionCommand', 'new DeleteFunctionCommand'],
};

/**
 * Where bundles are kept: inside the project, so the bundles' bare imports resolve to its
 * node_modules ($SAVEPOINT_BUNDLE_CACHE, a directory inside the project, overrides it).
 */
export function defaultCacheDir(root = ROOT) {
  return process.env.SAVEPOINT_BUNDLE_CACHE || join(root, 'node_modules', '.cache', 'savepoint');
}

/**
 * Node's compile cache of the CLI and of every agent it loads: `compile/` in the install's bundle
 * cache (bin/savepoint.js keepCompiledCode enables it there, before this module loads).
 */
export function compileCacheDir(root = ROOT) {
  return join(defaultCacheDir(root), 'compile');
}

/**
 * The CLI bundle of the sources under `root`, built now unless a bundle of the same sources is
 * cached: `{ dir, entries }` with the absolute path of each entry's output file.
 */
export async function cliBundle({ root = ROOT, cacheDir = defaultCacheDir(root) } = {}) {
  const sources = entriesOf(root);
  const packages = BUNDLED_PACKAGES.filter((name) => packageDir(name, root));
  const inlined = INLINED_PACKAGES.filter((name) => packageDir(name, root));
  const dir = await cached({
    cacheDir,
    compileCache: compileCacheDir(root),
    prefix: 'cli',
    // What the sources compile with; the root too: the bundle holds absolute file URLs.
    identity: [FORMAT, esbuildVersion(root), root, ...['package.json', 'tsconfig.json'].map((file) => readOr(join(root, file)) ?? '')],
    keepNamesUnder: () => inlined.map((name) => packageDir(name, root)),
    build: async (outdir, recorder) => {
      const options = {
        absWorkingDir: root,
        entryPoints: [...Object.values(sources).map((entry) => join(root, entry)), ...packages.map((name) => ({ in: name, out: `packages/${name}` }))],
        outbase: root,
        outdir,
        splitting: true,
        chunkNames: 'chunks/[name]-[hash]',
        // The harness reads no function's or class's own name (its errors set `name` themselves, and
        // none of its classes is renamed in the bundle today): esbuild's keepNames, which wraps every
        // function and class the bundle defines in a `__name` call as it is created, is a tenth of a
        // short command's CPU (`savepoint replay` of the sample day: 346 -> 314 ms). A user's agent
        // keeps it (agentBundle): their code may read names. test/architecture/own-names.test.ts holds the first.
        keepNames: false,
        // Every package external but those bundled (esbuild's `packages: 'external'` has no exceptions).
        packages: undefined,
      };
      const external = externalPackagesBut(packages, inlined);
      // The import graph only: nothing written, no source map.
      const graph = await buildWith(root, { ...options, write: false, metafile: true, sourcemap: false, plugins: [external] });
      const loadFirst = loadedFirst(root, sources, graph.metafile);
      const rewrite = (path, contents, loader) => loadFirst(path, zodLocalesOnCall(path, contents) ?? contents, loader);
      await buildWith(root, { ...options, plugins: [external, recorder(rewrite)] });
    },
  });
  const entries = Object.fromEntries(Object.entries(sources).map(([name, entry]) => [name, join(dir, entry.replace(/\.ts$/, '.js'))]));
  for (const name of packages) entries[name] = join(dir, 'packages', `${name}.js`);
  return { dir, entries };
}

/**
 * Resolves imports of the CLI bundle's own files without Node's resolver: a relative `.js` import
 * from one of its files (`./chunk-X.js`), or the file URL of one (an agent's bundle imports the
 * public entries so: agentBundle), is that file, an ES module. Node's resolver makes each of the
 * ~250 such imports of a start a file URL, stats the file, follows its real path and looks up the
 * nearest package.json for its format: ~5% of `savepoint replay`'s CPU (issue 38). The URL is the
 * one Node gives (its directory's real path, and a file of the bundle is no symlink), so a module
 * reached both ways is one instance; a URL through a symlink, and anything else, goes to Node.
 * `module.registerHooks` (Node 22.15, 23.5): on an older Node, Node resolves them all.
 */
export function resolveBundleImports(dir) {
  const within = `${pathToFileURL(realpathSync(dir)).href}/`;
  registerHooks?.({
    resolve(specifier, context, next) {
      if (specifier.endsWith('.js')) {
        const parent = context.parentURL;
        const url = specifier.startsWith('./') || specifier.startsWith('../') ? parent?.startsWith(within) && new URL(specifier, parent).href : specifier;
        if (url && url.startsWith(within)) return { url, format: 'module', shortCircuit: true };
      }
      return next(specifier, context);
    },
  });
}

/**
 * Leaves every bare import to Node (as `packages: 'external'` does) but those of the `bundled`
 * packages and the `inlined` ones.
 * A bundled CommonJS package's `require` of a Node built-in (commander's `require('node:events')`)
 * cannot stay a `require` in an ES module: it is the built-in module itself, as `require` returns it.
 */
function externalPackagesBut(bundled, inlined) {
  const own = new RegExp(`^(${bundled.join('|')})(/|$)`);
  const inline = new RegExp(`^(${inlined.join('|')})(/|$)`);
  return {
    name: 'savepoint-external-packages',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData === RESOLVING) return undefined;
        if (isBuiltin(args.path)) return args.kind === 'require-call' ? { path: args.path, namespace: BUILTIN } : builtinImport(args) ?? { path: args.path, external: true };
        if (inlined.length > 0 && inline.test(args.path)) return undefined;
        if (bundled.length > 0 && own.test(args.path)) return undefined;
        return (args.kind === 'import-statement' && (await requiredInstead(build, args))) || { path: args.path, external: true };
      });
      build.onLoad({ filter: /.*/, namespace: BUILTIN }, (args) => ({ contents: builtinModule(args.path), loader: 'js' }));
      build.onLoad({ filter: /.*/, namespace: BUILTIN_IMPORT }, (args) => ({ contents: importedBuiltin(args.path), loader: 'js' }));
      build.onLoad({ filter: /.*/, namespace: REQUIRED }, (args) => ({ contents: requiringModule(...JSON.parse(args.path)), loader: 'js' }));
    },
  };
}

/**
 * An external package that Node would load as CommonJS, loaded with `require` rather than a static `import`:
 * the same file, the same module instance (an agent's `import` of it shares it), without the scan
 * Node makes of a CommonJS module an ES module imports, and of every module it re-exports
 * (cjs-module-lexer: ~50 ms of CPU at every engine process's start, for the AWS SDK's clients and
 * the @smithy packages they re-export; the aws-cdk-lib modules of a synthesis). Only where Node's
 * `import` and `require` resolve the name to the same file and that file is CommonJS; a package
 * with an ES module build for `import` keeps it. Resolved at run time, as the import was, from the
 * importing file's package (an inlined package's own dependencies are its own). A dynamic `import()`
 * stays one: its namespace is what Node's scan finds. A missing package fails a `require` with
 * MODULE_NOT_FOUND ("Cannot find module 'x'"), where an `import` fails with ERR_MODULE_NOT_FOUND
 * ("Cannot find package 'x'"): code that names the install command for a missing optional package
 * takes both (local/template/synthesize.ts isMissingCdk).
 */
async function requiredInstead(build, args) {
  const from = nearestPackageJson(args.importer);
  if (!from) return undefined;
  let file;
  try {
    file = createRequire(from).resolve(args.path);
  } catch {
    return undefined;
  }
  const imported = await build.resolve(args.path, { kind: 'import-statement', resolveDir: args.resolveDir, pluginData: RESOLVING });
  if (imported.errors.length > 0 || imported.path !== file || !isCommonJs(file)) return undefined;
  return { path: JSON.stringify([from, args.path]), namespace: REQUIRED };
}

/** The module that stands for CommonJS package `name` resolved from `from` (a package.json): its exports, or the LAZY_EXPORTS functions that load it. */
function requiringModule(from, name) {
  const load = `process.getBuiltinModule("node:module").createRequire(${JSON.stringify(from)})(${JSON.stringify(name)})`;
  const lazy = LAZY_EXPORTS[name];
  if (!lazy) return `module.exports = ${load};`;
  const call = (member) => `return (loaded ??= ${load})${member}(...args);`;
  // A class: `new` makes an instance of the package's own class, and `instanceof` asks that class.
  const lazyClass = (name) =>
    `export function ${name}(...args) { return Reflect.construct((loaded ??= ${load}).${name}, args); }\n` +
    `Object.defineProperty(${name}, Symbol.hasInstance, { value: (value) => value instanceof (loaded ??= ${load}).${name} });`;
  return [
    'let loaded;',
    ...lazy.map((exported) =>
      exported.startsWith('new ') ? lazyClass(exported.slice(4)) : exported === 'default' ? `export default function (...args) { ${call('')} }` : `export function ${exported}(...args) { ${call(`.${exported}`)} }`,
    ),
  ].join('\n');
}

/** Whether Node loads `file` as CommonJS: a `.cjs`, or a `.js` with no package.json above it or whose nearest says no `"type": "module"`. */
function isCommonJs(file) {
  if (file.endsWith('.cjs')) return true;
  if (!file.endsWith('.js')) return false;
  const packageJson = nearestPackageJson(file);
  return packageJson === undefined || JSON.parse(readFileSync(packageJson, 'utf8')).type !== 'module';
}

/** The package.json nearest to `file` (at or above its directory); undefined when none. */
function nearestPackageJson(file) {
  return findUp(dirname(file), (at) => (existsSync(join(at, 'package.json')) ? join(at, 'package.json') : undefined));
}

/** The namespace of an external CommonJS package loaded with `require` (requiredInstead). */
const REQUIRED = 'savepoint-required';
/** The plugin data of its own resolution of a package's file (requiredInstead): esbuild's resolution, not the plugin's. */
const RESOLVING = { resolving: true };

/**
 * The CLI bundle's lazy modules (the files an `import()` loads, and the public entries, which only
 * the agent's bundle imports) each import, as well, every module
 * the CLI has evaluated before any lazy import can run: the static imports of what the CLI's entry
 * itself imports lazily (cli/main.ts). They are
 * evaluated already when a lazy module loads (the bundle's files are only ever imported by the CLI
 * process, the agent's bundle too), so the import runs nothing. It changes the layout: with
 * splitting, esbuild cuts the code into a chunk for every set of entry points (the public ones and
 * every `import()` target) that reaches it, and the CLI's modules, reached by the 48 lazy targets
 * in as many combinations, came in dozens of small chunks, each ~0.3-0.45 ms of Node's module
 * loading whatever its size (issue 38: a replay loaded 59 modules). Reached by all of them, they
 * are a few chunks. The entry and its own lazy targets are left out: they are still being
 * evaluated (cli/main.ts awaits at its top level), and importing them would wait on themselves.
 * Returns the recorder's rewrite of each source file: the lazy targets' with those imports added
 * at their end (imports are hoisted; the source's lines keep their numbers).
 */
function loadedFirst(root, sources, metafile) {
  const { inputs } = metafile;
  const edges = (file, kind) => (inputs[file]?.imports ?? []).filter((edge) => edge.kind === kind && !edge.external).map((edge) => edge.path);
  const staticClosure = (starts) => {
    const seen = new Set(starts);
    for (const file of seen) for (const next of edges(file, 'import-statement')) seen.add(next);
    return seen;
  };
  const entry = sources.cli;
  const evaluating = new Set([entry, ...edges(entry, 'dynamic-import')]);
  // Files only (not a bundled package's `require` of a built-in, in a namespace of its own). The
  // entry's own static imports are left out: what only the entry imports stays in the entry's file.
  const loaded = new Set([...staticClosure(edges(entry, 'dynamic-import'))].filter((file) => !evaluating.has(file) && existsSync(join(root, file))));
  // A lazy target the CLI imports statically too is one of them: it is left as it is, and so is the order they run in.
  const lazy = new Set(
    [...Object.values(sources), ...Object.keys(inputs).flatMap((file) => edges(file, 'dynamic-import'))].filter((file) => !evaluating.has(file) && !loaded.has(file)).map((file) => join(root, file)),
  );
  const imports = [...loaded].map((file) => `\nimport ${JSON.stringify(join(root, file))};`).join('');
  return async (path, contents, loader) => ({ contents: lazy.has(path) && loader !== 'json' ? `${contents}${imports}` : contents, loader });
}

/**
 * zod's locales (`z.locales`, `z.core.locales`: 62 besides English, ~360 kB, half of the code zod
 * brings), each loaded from zod's own CommonJS build of it at its first call, not compiled into
 * the CLI bundle: every start read them all, and `savepoint replay` (whose V8 flags compile every
 * function a module holds: bin/savepoint.js ONE_PASS_FLAGS) read each function of them from the
 * compile cache, ~3 ms of its CPU (issue 38), though nothing of savepoint calls one.
 * An agent's `z.config(z.locales.fr())` gets what zod's own function returns. English, zod's
 * default, is bundled as it is (zod's schemas import it themselves). Undefined, and the file
 * bundled as it is, unless `path` is zod's locales index as this reads it (one re-export of each
 * locale's default, English among them, each with its CommonJS build beside it).
 */
function zodLocalesOnCall(path, contents) {
  if (!ZOD_LOCALES.test(path)) return undefined;
  const locales = contents
    .trim()
    .split('\n')
    .map((line) => /^export \{ default as (\w+) \} from "\.\/([\w-]+)\.js";$/.exec(line.trim()));
  const dir = dirname(path);
  if (!locales.every((found) => found && existsSync(join(dir, `${found[2]}.cjs`))) || !locales.some(([, , file]) => file === 'en')) return undefined;
  const load = (file) => `process.getBuiltinModule("node:module").createRequire(${JSON.stringify(path)})(${JSON.stringify(`./${file}.cjs`)})`;
  return locales.map(([, name, file]) => (file === 'en' ? `export { default as ${name} } from "./en.js";` : `export function ${name}(...args) { return ${load(file)}(...args); }`)).join('\n');
}
const ZOD_LOCALES = /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/;

/** The namespace of a Node built-in that a bundled CommonJS package requires (externalPackagesBut). */
const BUILTIN = 'savepoint-builtin';

/**
 * The namespace of a Node built-in that the bundle's code imports (`import { readFileSync } from
 * 'node:fs'`): the module itself, as `process.getBuiltinModule` returns it, not Node's ES module
 * of it. Node makes that one at the first import by reading every export of the built-in once,
 * getters included: node:fs's `ReadStream` loads the streams, node:crypto's `webcrypto` and
 * `subtle` the Web Crypto modules (cipher, keys, x509, hkdf, pbkdf2) that savepoint never calls,
 * ~4 ms of CPU at every start (issue 38: `savepoint replay`). The bundle reads each export when it
 * calls it. A dynamic `import()` of a built-in is left to Node: its namespace is what it asks for.
 */
const BUILTIN_IMPORT = 'savepoint-builtin-import';

/** A static import of built-in `args.path` as BUILTIN_IMPORT's module; undefined for a dynamic one, or a built-in this Node does not give (left to Node). */
function builtinImport(args) {
  return args.kind === 'import-statement' && process.getBuiltinModule(args.path) !== undefined ? { path: args.path, namespace: BUILTIN_IMPORT } : undefined;
}

/** An agent's imports of Node built-ins as the CLI bundle's own (BUILTIN_IMPORT); the CLI bundle's go through externalPackagesBut. */
function importedBuiltins() {
  return {
    name: 'savepoint-imported-builtins',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => (isBuiltin(args.path) ? builtinImport(args) : undefined));
      build.onLoad({ filter: /.*/, namespace: BUILTIN_IMPORT }, (args) => ({ contents: importedBuiltin(args.path), loader: 'js' }));
    },
  };
}

/**
 * The module that stands for built-in `name` imported by the bundle's code: its default export the
 * module itself, and each export a `pick` of it that esbuild drops when nothing imports it (a pure
 * call), so that an export read by a getter (`ReadStream`) is read only by code that imports it.
 * The names are the built-in's own, as the Node that builds the bundle has them: an import of one
 * it does not have fails the build, as it would fail the import.
 */
function importedBuiltin(name) {
  const builtin = process.getBuiltinModule(name);
  const names = Object.keys(builtin).filter((key) => key !== 'default' && /^[A-Za-z_$][\w$]*$/.test(key));
  return [
    `const builtin = process.getBuiltinModule(${JSON.stringify(name)});`,
    'const pick = (key) => builtin[key];',
    'export default builtin;',
    ...names.map((key) => `export const ${key} = /* @__PURE__ */ pick(${JSON.stringify(key)});`),
  ].join('\n');
}

/**
 * Built-ins an inlined package requires at its top for what the CLI never or seldom does, each with
 * the functions it calls: loaded at the first call. commander requires node:child_process (with it
 * node:net and node:dgram, 1-2.5 ms of CPU at every start) to spawn an executable subcommand, which
 * savepoint has none of.
 */
const LAZY_BUILTINS = { 'node:child_process': ['spawn'] };

/** The module that stands for built-in `name` required by a bundled package: the module itself, or the LAZY_BUILTINS functions that load it. */
function builtinModule(name) {
  const load = `process.getBuiltinModule(${JSON.stringify(name)})`;
  const lazy = LAZY_BUILTINS[name];
  if (!lazy) return `module.exports = ${load};`;
  return `module.exports = { ${lazy.map((member) => `${member}: (...args) => ${load}.${member}(...args)`).join(', ')} };`;
}

/**
 * An agent module (the user's TypeScript or JavaScript, anywhere on disk) compiled to one file it
 * can import. With a CLI bundle (a checkout of savepoint, or an installed package that could build
 * one): `savepoint`, `savepoint/sim` and `savepoint/client` (and relative imports of their files)
 * are the CLI bundle's own entry files, so the agent and the harness share the harness's modules
 * (a relative import of any other harness file is bundled with the agent: a copy of its own).
 * Without one (an installed package whose CLI runs dist/): `savepoint` and every other package
 * stay bare imports, which Node resolves to the package's compiled entry points, the same modules
 * the CLI runs. Kept next to the agent's nearest node_modules, where its bare imports resolve as
 * they do from the agent's own file. Returns the file to import.
 */
export async function agentBundle(modulePath, cli, { root = ROOT } = {}) {
  const owner = nearestPackageRoot(dirname(modulePath)) ?? root;
  const cacheDir = owner === resolve(root) ? defaultCacheDir(root) : join(owner, 'node_modules', '.cache', 'savepoint');
  try {
    return await agentBundleIn(cacheDir, modulePath, cli, root);
  } catch (error) {
    // A node_modules this process may not write to (someone else's install): the CLI's own cache.
    if (!['EACCES', 'EPERM', 'EROFS'].includes(error?.code) || cacheDir === defaultCacheDir(root)) throw error;
    return agentBundleIn(defaultCacheDir(root), modulePath, cli, root);
  }
}

async function agentBundleIn(cacheDir, modulePath, cli, root) {
  const publicFiles = cli && new Map(Object.entries(entriesOf(root)).map(([name, entry]) => [join(root, entry), cli.entries[name]]));
  const dir = await cached({
    cacheDir,
    compileCache: compileCacheDir(root),
    prefix: 'agent',
    identity: [FORMAT, esbuildVersion(root), modulePath, cli?.dir ?? readOr(join(root, 'package.json'))],
    build: (outdir, recorder) =>
      buildWith(root, {
        absWorkingDir: dirname(modulePath),
        entryPoints: { agent: modulePath },
        outdir,
        plugins: [...(cli ? [harnessFromBundle(cli.entries, publicFiles, sharedPackages(cli.entries, cacheDir, root))] : []), importedBuiltins(), recorder()],
      }).catch((error) => {
        // esbuild names files relative to its working directory: the user gets the whole path.
        if (!Array.isArray(error?.errors) || error.errors.length === 0) throw error;
        const where = ({ location: at }) => (at ? `${resolve(dirname(modulePath), at.file)}:${at.line}:${at.column + 1}: ` : '');
        throw new Error(`agent ${modulePath} does not compile:\n${error.errors.map((problem) => `  ${where(problem)}${problem.text}`).join('\n')}`, { cause: error });
      }),
  });
  return join(dir, 'agent.js');
}

/**
 * The packages the CLI bundle holds (BUNDLED_PACKAGES) that the agent's bundle, kept in `cacheDir`,
 * would import from the same directory as the CLI's sources: its imports of them are the CLI
 * bundle's entries. Another install of one (the agent's own project's) stays the agent's.
 */
function sharedPackages(entries, cacheDir, root) {
  return BUNDLED_PACKAGES.filter((name) => entries[name] && packageDir(name, cacheDir) === packageDir(name, root));
}

/** Resolves the harness's public modules, and the packages it shares (`shared`), to the CLI bundle's entry files (external: imported, not copied). */
function harnessFromBundle(entries, publicFiles, shared) {
  return {
    name: 'savepoint-harness',
    setup(build) {
      build.onResolve({ filter: /^savepoint(\/sim|\/client)?$/ }, (args) => ({ path: pathToFileURL(entries[args.path]).href, external: true }));
      if (shared.length > 0) build.onResolve({ filter: new RegExp(`^(${shared.join('|')})$`) }, (args) => ({ path: pathToFileURL(entries[args.path]).href, external: true }));
      build.onResolve({ filter: /^\.\.?\// }, async (args) => {
        if (args.pluginData?.harness) return undefined;
        const resolved = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: { harness: true } });
        const entry = publicFiles.get(resolved.path);
        return entry ? { path: pathToFileURL(entry).href, external: true } : resolved;
      });
    },
  };
}

async function buildWith(root, options) {
  const esbuild = await import('esbuild').catch((error) => {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new Error('savepoint compiles TypeScript agents with esbuild, an optional peer dependency: npm install -D esbuild', { cause: error });
  });
  return esbuild.build({
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    // Error classes and anything that reads a function's name keep theirs when the bundle renames
    // (the CLI's own bundle turns it off: cliBundle).
    keepNames: true,
    sourcemap: 'linked',
    // The checkout's own; an installed package has none (esbuild reads the agent's, if any).
    tsconfig: existsSync(join(root, 'tsconfig.json')) ? join(root, 'tsconfig.json') : undefined,
    logLevel: 'silent',
    define: { 'import.meta.url': `${MODULE}.url`, 'import.meta.dirname': `${MODULE}.dirname`, 'import.meta.filename': `${MODULE}.filename` },
    ...options,
  });
}

/** What `import.meta` (url, dirname, filename) becomes in each bundled file: a constant declared in that file. */
const MODULE = '__savepoint_module';

/**
 * Loads every source file the build reads, and remembers its content (the bundle's key is the
 * content that was compiled, not what is on disk after the build). Code that finds files next to
 * itself (`new URL('./x', import.meta.url)`) keeps finding them: each file's `import.meta.url` is
 * its own source file's URL, not the bundle's. Declared on the first line, so lines keep their numbers.
 */
function sourcesRecorder(inputs, keepNamesUnder, rewrite = async (path, contents, loader) => ({ contents, loader })) {
  // Packages are external (never loaded), so every file loaded is a source, even one under a
  // node_modules (savepoint installed as a package).
  return {
    name: 'savepoint-sources',
    setup(build) {
      build.onLoad({ filter: /\.(ts|mts|js|mjs|json)$/ }, async (args) => {
        // Stamped before it is read: a file changed after this is hashed again by the next start.
        const stamp = stampOf(args.path);
        // Read synchronously: node:fs/promises (~1 ms of CPU to load) would be loaded by every start, for builds alone.
        const text = readFileSync(args.path, 'utf8');
        inputs.set(args.path, { text, stamp });
        const loader = extname(args.path).replace(/^\.m?/, '');
        const meta = { url: pathToFileURL(args.path).href, dirname: dirname(args.path), filename: args.path };
        const contents = loader !== 'json' && text.includes('import.meta') ? `const ${MODULE} = ${JSON.stringify(meta)}; ${text}` : text;
        // A file of an inlined package (INLINED_PACKAGES) names its functions and classes itself (`__name`): the bundle may rename them.
        if (keepNamesUnder.some((dir) => args.path.startsWith(`${dir}${sep}`))) {
          const esbuild = await import('esbuild');
          return { contents: (await esbuild.transform(contents, { loader, keepNames: true, sourcefile: args.path })).code, loader };
        }
        return rewrite(args.path, contents, loader);
      });
    },
  };
}

/**
 * A cached build. `<cacheDir>/index-<id>.json` lists the source files the last build of this
 * thing read; their content (and `identity`) is the key of the build's directory
 * `<cacheDir>/<prefix>-<key>`. A directory whose manifest does not match what it holds is
 * damaged and is built again. Builds go to a temporary directory renamed into place: a process
 * building at the same time as another only wastes its work.
 */
async function cached({ cacheDir, compileCache, prefix, identity, build, keepNamesUnder = () => [] }) {
  const index = join(cacheDir, `index-${prefix}-${digest(identity.join('\0'))}.json`);
  const known = readIndex(index);
  if (known) {
    // A file whose size, mtime and ctime are those it had when it was hashed has the same content
    // (ctime cannot be set back, even by tools that keep mtimes); any other is hashed again.
    const unchanged = stampsAreThese(known.files);
    const key = unchanged ? known.key : keyOf(identity, known.files.map(([file]) => [file, readOr(file)]));
    const dir = join(cacheDir, `${prefix}-${key}`);
    if (isIntact(dir)) {
      if (!unchanged) writeIndex(index, key, known.files.map(([file]) => file));
      markUsed(dir);
      return dir;
    }
  }
  mkdirSync(cacheDir, { recursive: true });
  const draft = join(cacheDir, `${prefix}.draft-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    const read = new Map();
    await build(draft, (rewrite) => sourcesRecorder(read, keepNamesUnder(), rewrite));
    declareModules(draft);
    await asciiOnly(draft);
    namespacesAsDictionaries(draft);
    const files = [...read.keys()].sort();
    const key = keyOf(identity, files.map((file) => [file, read.get(file).text]));
    const dir = join(cacheDir, `${prefix}-${key}`);
    writeFileSync(join(draft, 'manifest.json'), JSON.stringify({ files: manifestOf(draft) }));
    install(draft, dir);
    writeAtomically(index, JSON.stringify({ key, files: files.map((file) => [file, read.get(file).stamp]) }));
    prune(cacheDir, prefix, dir, compileCache);
    return dir;
  } finally {
    rmSync(draft, { recursive: true, force: true });
  }
}

/**
 * Every build is ES modules (format: 'esm'), kept under a node_modules where no package.json says
 * so: without one of its own, Node would guess each file's format as it loads it (parsing it as
 * CommonJS first, ~10 ms of a CLI start: issue 38), and take a file with no import or export for
 * CommonJS. Each of its directories says so too: Node looks for the package.json nearest to every
 * module it resolves and loads, and remembers only the ones it finds (a replay's start looked for
 * `chunks/package.json` 282 times). In the manifest like the build's other files.
 */
function declareModules(dir) {
  const directories = [dir, ...readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => join(entry.parentPath ?? entry.path, entry.name))];
  for (const directory of directories) writeFileSync(join(directory, 'package.json'), '{ "type": "module" }\n');
}

/**
 * esbuild writes a build's code in ASCII (its `charset` escapes other characters in strings and
 * names) but keeps the comments it keeps as they were: one `—` or `≤` in a comment made Node decode
 * the whole file as UTF-16 (zod's chunk: 760 kB), a slower read and a source twice the size for V8
 * and the compile cache, at every start (issue 38). Each UTF-16 unit that is not ASCII becomes one
 * `?` (every column stays where the source map says it is), in a file where that changes comments
 * only: the file and its rewrite are the same code once esbuild drops their comments. A template
 * or a regular expression keeps its characters (escaping them would change its raw text): a file
 * with one stays as it is.
 */
async function asciiOnly(dir) {
  const esbuild = await import('esbuild');
  const code = (text) => esbuild.transformSync(text, { loader: 'js', minifyWhitespace: true, legalComments: 'none', charset: 'ascii', logLevel: 'silent' }).code;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.js')) continue;
    const file = join(entry.parentPath ?? entry.path, entry.name);
    const text = readFileSync(file, 'utf8');
    if (!/[^\x00-\x7f]/.test(text)) continue;
    const ascii = text.replace(/[^\x00-\x7f]/g, '?');
    if (code(ascii) === code(text)) writeFileSync(file, ascii);
  }
}

/**
 * esbuild's `__export`, which fills a namespace object (`export * as core`, zod's `z`) with a
 * getter per name, made to turn the object into a dictionary first (V8's slow properties: two
 * properties added, then the first deleted, which is not the last). On an object of fast
 * properties each getter defined gave it a new hidden class, its descriptors copied from the
 * last: quadratic in the names, and zod's namespaces hold 992 of them, ~5 M instructions of every
 * CLI start (issue 38: `savepoint replay`'s, `savepoint run`'s). The same getters, in the same
 * order, on the same object. The helper's first line only grows (the bundle's source maps keep
 * their lines); a build whose helper is not this text is left as it is.
 */
function namespacesAsDictionaries(dir) {
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.js')) continue;
    const file = join(entry.parentPath ?? entry.path, entry.name);
    const text = readFileSync(file, 'utf8');
    if (text.includes(ESBUILD_EXPORT)) writeFileSync(file, text.replace(ESBUILD_EXPORT, DICTIONARY_EXPORT));
  }
}
const ESBUILD_EXPORT = 'var __export = (target, all) => {\n  for (var name in all)\n    __defProp(target, name, { get: all[name], enumerable: true });\n};';
const DICTIONARY_EXPORT = ESBUILD_EXPORT.replace('{\n', '{ target.__savepoint_a = 0; target.__savepoint_b = 0; delete target.__savepoint_a; delete target.__savepoint_b;\n');

/** Moves a fresh build into place, unless an intact build of the same sources got there first. */
function install(draft, dir) {
  if (isIntact(dir)) return;
  if (existsSync(dir)) {
    // Damaged: set aside (another process may be reading it) and replaced.
    try {
      renameSync(dir, `${dir}.damaged-${process.pid}-${randomBytes(4).toString('hex')}`);
    } catch {
      // another process set it aside first
    }
  }
  try {
    renameSync(draft, dir);
  } catch (error) {
    if (!isIntact(dir)) throw error; // not a concurrent builder's finished copy: a real failure
  }
}

/** Every output file with the hash of its content and its stamp. */
function manifestOf(dir) {
  return Object.fromEntries(
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && !entry.name.endsWith('.map') && entry.name !== 'manifest.json')
      .map((entry) => {
        const file = relative(dir, join(entry.parentPath ?? entry.path, entry.name));
        return [file, [digest(readFileSync(join(dir, file))), stampOf(join(dir, file))]];
      }),
  );
}

/**
 * Whether a bundle directory holds exactly what its manifest says it does (a missing, truncated or
 * edited file is damage). A file with the stamp it was written with is what was written (any
 * write changes its ctime); any other is hashed.
 */
export function isIntact(dir) {
  try {
    const { files } = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    // The manifest's names are relative and normalized (manifestOf): each path is the directory's and the name (see stampsAreThese).
    const within = `${dir}${sep}`;
    let count = 0;
    for (const file in files) {
      const recorded = files[file];
      const path = within + file;
      if (stampOf(path) !== recorded[1] && digest(readFileSync(path)) !== recorded[0]) return false;
      count += 1;
    }
    return count > 0;
  } catch {
    return false;
  }
}

/**
 * Whether every `[file, stamp]` is the file's stamp now. With isIntact, the check every start
 * makes, once, as code not yet compiled: there an array destructured per file and path.join cost
 * about half of it (7 -> 3.7 ms of CPU for the CLI bundle's ~460 sources and ~120 outputs).
 */
function stampsAreThese(stamped) {
  for (let index = 0; index < stamped.length; index += 1) {
    const entry = stamped[index];
    if (stampOf(entry[0]) !== entry[1]) return false;
  }
  return true;
}

/**
 * Removes the builds of the same kind that no start has used for a day, but for the three used
 * last, and damaged ones; then the indexes an hour old whose build is gone (every CLI bundle gives
 * each agent an index of its own: upgrades and edits left them behind). By last use, not by age:
 * a project's agents are all builds of one kind, and, by age, an edit of one removed the builds of
 * the others that were older than an hour (beyond the three newest), each built again at its next
 * start. A day: a process started from an older build (a `savepoint serve`) may still import its
 * lazy chunks and read its source maps.
 * A build removed empties Node's compile cache (`compileCache`) too: Node keeps each file's compiled
 * code under its path and never removes an entry (its docs leave stale entries to the directory's
 * owner), and every build's files have paths of their own, so the code of every build ever made
 * stayed (hundreds of MB after a few hundred builds). Emptied, each command compiles once again.
 */
function prune(cacheDir, prefix, current, compileCache) {
  const KEEP = 3;
  const HOUR = 3_600_000;
  const UNUSED = 24 * HOUR;
  try {
    const now = Date.now();
    markUsed(current);
    const names = readdirSync(cacheDir);
    const builds = names
      .filter((name) => name.startsWith(`${prefix}-`))
      .map((name) => join(cacheDir, name))
      .filter((dir) => dir !== current)
      .map((dir) => ({ dir, unusedFor: now - statSync(dir).mtimeMs }))
      .sort((a, b) => a.unusedFor - b.unusedFor);
    const damaged = builds.filter(({ dir }) => dir.includes('.damaged-'));
    const older = builds.filter(({ dir }) => !dir.includes('.damaged-')).slice(KEEP - 1);
    const removed = [...damaged, ...older.filter(({ unusedFor }) => unusedFor > UNUSED)];
    for (const { dir } of removed) rmSync(dir, { recursive: true, force: true });
    if (removed.length > 0 && compileCache) rmSync(compileCache, { recursive: true, force: true });
    for (const index of names.filter((name) => name.startsWith(`index-${prefix}-`)).map((name) => join(cacheDir, name))) {
      const known = readIndex(index);
      if (now - statSync(index).mtimeMs > HOUR && !(known && existsSync(join(cacheDir, `${prefix}-${known.key}`)))) rmSync(index, { force: true });
    }
  } catch {
    // only tidying
  }
}

/** A build's directory's mtime is when a start last used it (prune). */
function markUsed(dir) {
  try {
    const now = Date.now() / 1000;
    utimesSync(dir, now, now);
  } catch {
    // a cache this process may not write to (another user's install): only its pruning is affected
  }
}

/** `{ key, files: [[file, stamp]] }`: the last build's key and the files it read, or undefined when there is none that makes sense. */
function readIndex(index) {
  try {
    const known = JSON.parse(readFileSync(index, 'utf8'));
    const valid =
      typeof known.key === 'string' &&
      Array.isArray(known.files) &&
      known.files.length > 0 &&
      known.files.every((entry) => Array.isArray(entry) && typeof entry[0] === 'string' && typeof entry[1] === 'string');
    return valid ? known : undefined;
  } catch {
    return undefined;
  }
}

/** Rewrites an index after its files were hashed again (touched, not changed): the next start trusts their stamps. */
function writeIndex(index, key, files) {
  try {
    writeAtomically(index, JSON.stringify({ key, files: files.map((file) => [file, stampOf(file)]) }));
  } catch {
    // only a cache: the next start hashes them again
  }
}

function stampOf(file) {
  try {
    const stat = statSync(file);
    return `${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;
  } catch {
    return 'missing';
  }
}

function keyOf(identity, contents) {
  const hash = createHash('sha256');
  for (const part of identity) hash.update(part).update('\0');
  for (const [file, text] of contents) hash.update(file).update('\0').update(text ?? '\u0000missing').update('\0');
  return hash.digest('hex').slice(0, 24);
}

function digest(data) {
  return createHash('sha256').update(data).digest('hex');
}

function readOr(file) {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function writeAtomically(file, text) {
  const draft = `${file}.${process.pid}-${randomBytes(4).toString('hex')}`;
  writeFileSync(draft, text);
  renameSync(draft, file);
}

function esbuildVersion(root) {
  return readOr(join(root, 'node_modules', 'esbuild', 'package.json')) ?? readOr(join(root, '..', 'esbuild', 'package.json')) ?? 'esbuild';
}

/** The directory Node finds package `name` in from `dir` (the nearest node_modules/<name> at or above it), its real path; undefined when none. */
function packageDir(name, dir) {
  return findUp(dir, (at) => (existsSync(join(at, 'node_modules', name, 'package.json')) ? realpathSync(join(at, 'node_modules', name)) : undefined));
}

/** The nearest directory at or above `dir` that has a node_modules directory. */
function nearestPackageRoot(dir) {
  return findUp(dir, (at) => (existsSync(join(at, 'node_modules')) ? at : undefined));
}

/** What `found` answers for the nearest directory at or above `dir` it answers anything for; undefined when none. */
function findUp(dir, found) {
  for (let at = resolve(dir); ; at = dirname(at)) {
    const answer = found(at);
    if (answer !== undefined) return answer;
    if (dirname(at) === at) return undefined;
  }
}

// `node bin/bundle.js` (`npm run bundle`): builds the CLI bundle now, if it is not cached, and
// prints its directory. CI can run it once before the tests, which start many CLI processes at once.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { dir } = await cliBundle();
  process.stdout.write(`${dir}\n`);
}
