import { createHash } from 'node:crypto';
import { closeSync, constants, existsSync, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync, type Stats } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { peerVersion } from '../packages/optional-peers.js';
import { foreignLink, otherWriters, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../state/private-state.js';
import { synthesizeTemplate, templateVariant, type CfnTemplate, type TemplateOptions } from './synthesize.js';

/** This copy of savepoint: a checkout's root, or an installed package's dist/. */
const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The files the synthesized template is made from: the stack's sources, what they import from
 * lambdas/, how it is synthesized here (a traced one's policies), package.json; in an installed
 * package, the template its build shipped (template/) and the code that renames it. The batch
 * state machine's template (cachedBatchTemplate) is made from the same stack sources, the batch
 * module they import, and its own synthesis.
 */
const SOURCES = [
  'infra',
  'lambdas/shared',
  'lambdas/ledger/dynamodb-ledger.ts',
  'lambdas/runs/batch.ts',
  'lambdas/runs/batch.js',
  'local/template/synthesize.ts',
  'local/template/synthesize.js',
  'local/template/batch-synth.ts',
  'local/template/batch-synth.js',
  'local/template/batch-deploy.ts',
  'local/template/batch-deploy.js',
  'package.json',
  'template',
];

export interface TemplateCacheOptions {
  /**
   * The cache directory. It is trusted only when it is the current user's and nobody else can
   * write it: a template read from it is what the local engine runs (its roles and policies).
   * @default $SAVEPOINT_CACHE_DIR, else `savepoint-cache-<uid>` in the OS's temporary directory, created 0700
   */
  readonly dir?: string;
  /** Told why a cache entry or directory was not used. @default nothing */
  readonly onNote?: (note: string) => void;
}

/**
 * The synthesized template of an agent's stack, cached on disk under a key of everything it is
 * made from (templateKey): a run does not synthesize (seconds) unless that changed. The cache is
 * only a cache: a file that is not a template, or one another user could have written, is not
 * used (the template is synthesized again, and replaced only in a directory that is ours).
 */
export async function cachedTemplate(agentName: string, options: TemplateOptions & TemplateCacheOptions = {}): Promise<CfnTemplate> {
  return cachedSynthesis(
    templateCacheFile(agentName, options),
    () => synthesizeTemplate(agentName, { traced: options.traced === true, ...(options.toolTimeoutMs !== undefined && { toolTimeoutMs: options.toolTimeoutMs }), ...(options.people && { people: options.people }), ...(options.children && { children: options.children }) }),
    options,
  );
}

/**
 * The batch state machine's template as a checkout synthesizes it (local/template/batch-synth.ts),
 * cached as an agent's is: a process that runs a batch loads and runs the CDK (~0.5 s of CPU) only
 * when what it is made from changed. (An installed package reads the one its build shipped:
 * local/template/batch.ts.)
 */
export async function cachedBatchTemplate(options: TemplateCacheOptions = {}): Promise<CfnTemplate> {
  return cachedSynthesis(batchTemplateCacheFile(options), async () => (await import('./batch-synth.js')).synthesizeBatchTemplate() as CfnTemplate, options);
}

/** The file the batch state machine's template is cached in (templateKey in the name). */
export function batchTemplateCacheFile(options: Pick<TemplateCacheOptions, 'dir'> = {}): string {
  return join(cacheDir(options.dir), `batch-template-${templateKey()}.json`);
}

/** The template cached in `file` when it can be trusted; else synthesized, and kept there when the directory is ours. */
async function cachedSynthesis(file: string, synthesize: () => Promise<CfnTemplate>, options: TemplateCacheOptions): Promise<CfnTemplate> {
  const cached = readCachedFile(file, options);
  if (cached) return cached;
  const template = await synthesize();
  const dir = cacheDir(options.dir);
  try {
    if (!ownPath(dir, options.onNote)) return template;
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    if (!trustedDir(dir, options.onNote)) return template;
    const draft = `${file}.${process.pid}.tmp`;
    writeFileSync(draft, JSON.stringify(template), { mode: PRIVATE_FILE_MODE });
    renameSync(draft, file); // whole or not at all: a concurrent reader never sees half of it
  } catch (error) {
    // Only a cache: the next run synthesizes again.
    options.onNote?.(`the template cache ${dir} could not be written: ${String(error)}`);
  }
  return template;
}

/** The template cached for the agent in this copy of savepoint, when there is one that can be trusted; no synthesis. */
export function readCachedTemplate(agentName: string, options: TemplateOptions & TemplateCacheOptions = {}): CfnTemplate | undefined {
  return readCachedFile(templateCacheFile(agentName, options), options);
}

/** The template `file` holds, when it is one and can be trusted. */
function readCachedFile(file: string, options: TemplateCacheOptions): CfnTemplate | undefined {
  if (!trustedDir(cacheDir(options.dir), options.onNote)) return undefined;
  const text = readOwnFile(file, options.onNote);
  if (text === undefined) return undefined;
  try {
    const template = JSON.parse(text) as CfnTemplate;
    if (typeof template?.Resources === 'object' && template.Resources !== null) return template;
  } catch {
    // not JSON: damaged
  }
  options.onNote?.(`${file}: not a synthesized template; synthesizing again`);
  return undefined;
}

/** The file the agent's template is cached in (its variant and templateKey in the name). */
export function templateCacheFile(agentName: string, options: TemplateOptions & Pick<TemplateCacheOptions, 'dir'> = {}): string {
  const variant = templateVariant(options);
  return join(cacheDir(options.dir), `template-${agentName.replace(/[^A-Za-z0-9_-]/g, '_')}${variant}-${templateKey()}.json`);
}

function cacheDir(dir?: string): string {
  // One per user by default: a directory of a shared /tmp another user made first is refused (trustedDir).
  const uid = process.getuid?.();
  return dir ?? process.env['SAVEPOINT_CACHE_DIR'] ?? join(tmpdir(), uid === undefined ? 'savepoint-cache' : `savepoint-cache-${uid}`);
}

/**
 * Whether what `dir` holds can be trusted: it is a directory of the current user's that no one
 * else can write. In a /tmp shared between users, another user could otherwise make the directory
 * first (or open it up) and plant a template with roles of their choosing, or a marker that skips
 * a definition's validation. A directory that does not exist holds nothing, and is not noted.
 */
function trustedDir(dir: string, onNote?: (note: string) => void): boolean {
  if (!ownPath(dir, onNote)) return false;
  let stats;
  try {
    stats = statSync(dir); // a link of ours (or root's) is judged by its target, whose owner is checked
  } catch {
    return false;
  }
  const who = stats.isDirectory() ? othersWho(stats) : 'is not a directory';
  if (who) onNote?.(`${dir} ${who}: the template cache is not used (another user could plant what it holds); remove it, or set SAVEPOINT_CACHE_DIR to a directory of your own`);
  return who === undefined;
}

/**
 * Whether `dir` is reached without another user's symbolic link (on it or above it): its owner
 * could point it at a directory of ours at any moment (so ours being its target proves nothing),
 * and mkdir would create directories through it. Such a cache is not used (the template is
 * synthesized), not an error: any user can make the default path in a shared /tmp, and that must
 * not stop our runs.
 */
function ownPath(dir: string, onNote?: (note: string) => void): boolean {
  const link = foreignLink(dir);
  if (link) onNote?.(`${link.path} is a symbolic link owned by another user (uid ${link.uid}): the template cache ${dir} is not used; remove the link, or set SAVEPOINT_CACHE_DIR to a directory of your own`);
  return link === undefined;
}

/**
 * Who else can write an entry of the cache (local/state/private-state.ts's rule). Not judged where there
 * are no user ids (Windows): its temporary directory is the user's own, and the modes stat reports
 * there say nothing of other users.
 */
function othersWho(stats: Stats): string | undefined {
  return process.getuid === undefined ? undefined : otherWriters(stats);
}

/** The text of `file` when it is a regular file of the current user's that no one else can write (checked on the file opened, not its name). */
function readOwnFile(file: string, onNote?: (note: string) => void): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    if ((error as { code?: string }).code === 'ELOOP') onNote?.(`${file} is a symbolic link: not used`);
    return undefined;
  }
  try {
    const stats = fstatSync(fd);
    const who = stats.isFile() ? othersWho(stats) : 'is not a file';
    if (who) {
      onNote?.(`${file} ${who}: not used; synthesizing again`);
      return undefined;
    }
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * State machine definitions that passed the interpreter's validation, remembered on disk by the
 * hash of their text (for LocalEngine's `validated`): validating compiles a JSON Schema, which
 * costs a new process ~150 ms and ~15 MB, and the same definition validates the same way. Also
 * keyed by the interpreter's version, so an upgrade validates again. A file that cannot be
 * written only means the next process validates again; a marker in a directory another user can
 * write, or one of theirs, is not believed.
 */
export function validatedDefinitions(options: Pick<TemplateCacheOptions, 'dir'> = {}): { has(text: string): boolean; add(text: string): void } {
  return knownValid('asl', INTERPRETER, options);
}

/**
 * Tool input schemas the simulated model provider accepted (sim/wire/json-schema.ts, whose texts
 * name its check and ajv's version), remembered on disk as definitions are (above): checking the
 * first schema loads ajv and compiles the JSON Schema meta-schema, ~45 ms of a process's CPU.
 */
export function validatedToolSchemas(options: Pick<TemplateCacheOptions, 'dir'> = {}): { has(text: string): boolean; add(text: string): void } {
  return knownValid('tool-schema', '', options);
}

/** Texts that passed a check of `kind` by `checker`, remembered as marker files named by their hash, trusted as the cache is. */
function knownValid(kind: string, checker: string, options: Pick<TemplateCacheOptions, 'dir'>): { has(text: string): boolean; add(text: string): void } {
  const dir = cacheDir(options.dir);
  const marker = (text: string) => join(dir, `valid-${kind}-${createHash('sha256').update(checker).update('\0').update(text).digest('hex').slice(0, 32)}`);
  const known = new Set<string>();
  return {
    has: (text) => known.has(text) || (trustedDir(dir) && ownMarker(marker(text))),
    add: (text) => {
      if (known.has(text)) return;
      known.add(text);
      try {
        if (!ownPath(dir)) return;
        mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
        if (trustedDir(dir)) writeFileSync(marker(text), '', { mode: PRIVATE_FILE_MODE });
      } catch {
        // only a cache
      }
    },
  };
}

function ownMarker(path: string): boolean {
  try {
    const stats = lstatSync(path);
    return stats.isFile() && othersWho(stats) === undefined;
  } catch {
    return false;
  }
}

const requireHere = createRequire(import.meta.url);

/** The version of an installed package as this copy resolves it (the CDK is an optional peer: `none` when absent). */
function installedVersion(name: string): string {
  try {
    return String((JSON.parse(readFileSync(requireHere.resolve(`${name}/package.json`), 'utf8')) as { version?: unknown }).version);
  } catch {
    return 'none';
  }
}

/** The local engine's interpreter as this copy resolves it: a checkout's, or the one installed beside savepoint. */
const INTERPRETER = peerVersion('aws-local-stepfunctions') ?? 'unknown';

/**
 * What the synthesized template depends on besides the agent's name and variant, hashed:
 *
 *   - the sources it is made from (SOURCES), by path within this copy and content;
 *   - where this copy is: each step function's asset is hashed from its bundling options, which
 *     hold the handler's absolute path (infra/step-function.ts), and each function version's
 *     logical id from its code; so two checkouts (or installed copies) of the same sources
 *     synthesize different version ids, and must not share a template;
 *   - savepoint's version, and the CDK's as installed (aws-cdk-lib, constructs): an upgrade can
 *     change what is synthesized (logical ids, defaults) with no source changed;
 *   - the CDK context every App in the process reads from its environment (CDK_CONTEXT_JSON, or
 *     the file CONTEXT_OVERFLOW_LOCATION_ENV names): feature flags change the template.
 *
 * Not the working directory nor the agent's module: the stack is the same for every agent (only
 * its name differs, which names the entry), and its placeholder entry is a path of this copy
 * (local/template/synthesize.ts).
 */
export function templateKey(): string {
  const overflow = process.env['CONTEXT_OVERFLOW_LOCATION_ENV'];
  const parts = [...copyParts(), process.env['CDK_CONTEXT_JSON'] ?? '', overflow ? readQuietly(overflow) : ''];
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex').slice(0, 16);
}

/**
 * The key's parts read from this copy's files, read once per process: hashing every source costs
 * tens of milliseconds (a third of a warm replay), and what a process synthesizes is the code it
 * imported, which does not change under it. The CDK context is read each time: a process can set it.
 */
function copyParts(): readonly string[] {
  return (memoizedCopyParts ??= [sourcesHash(), root, ownVersion(), `aws-cdk-lib@${installedVersion('aws-cdk-lib')}`, `constructs@${installedVersion('constructs')}`]);
}
let memoizedCopyParts: readonly string[] | undefined;

/** savepoint's own version: package.json beside a checkout's sources, or above an installed package's dist/. */
function ownVersion(): string {
  for (const file of [join(root, 'package.json'), join(root, '..', 'package.json')]) {
    try {
      const { version } = JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown };
      if (typeof version === 'string') return version;
    } catch {
      // not this one
    }
  }
  return 'unknown';
}

function readQuietly(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** The hash of every file under SOURCES (path within this copy and content), in a fixed order. */
export function sourcesHash(): string {
  const hash = createHash('sha256');
  for (const path of SOURCES.flatMap((source) => files(join(root, source))).sort()) {
    hash.update(relative(root, path)).update('\0').update(readFileSync(path)).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

function files(path: string): string[] {
  // An installed package holds dist/'s .js, not the .ts sources: what is not there is not hashed.
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).flatMap((name) => files(join(path, name)));
}
