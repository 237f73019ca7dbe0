import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { synthesizeTemplate, type CfnTemplate, type TemplateOptions } from './template.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** What the synthesized template is made from: the stack's sources, what they import from lambdas/, how it is synthesized here (a traced one's policies), and the CDK's version. */
const SOURCES = ['infra', 'lambdas/shared', 'lambdas/ledger/dynamodb-ledger.ts', 'local/template.ts', 'package.json'];

/**
 * The synthesized template of an agent's stack, cached on disk by a hash of the sources it is made
 * from: a run does not synthesize (seconds) unless infra/ or what it imports changed. The cache is
 * only a cache: a file that is not a template is synthesized again and replaced.
 */
export async function cachedTemplate(agentName: string, options: TemplateOptions & { dir?: string; onNote?: (note: string) => void } = {}): Promise<CfnTemplate> {
  const dir = cacheDir(options.dir);
  const variant = options.traced ? '-traced' : '';
  const file = join(dir, `template-${agentName.replace(/[^A-Za-z0-9_-]/g, '_')}${variant}-${sourcesHash()}.json`);
  const cached = readTemplate(file, options.onNote);
  if (cached) return cached;
  const template = await synthesizeTemplate(agentName, { traced: options.traced === true });
  mkdirSync(dir, { recursive: true });
  const draft = `${file}.${process.pid}.tmp`;
  writeFileSync(draft, JSON.stringify(template));
  renameSync(draft, file); // whole or not at all: a concurrent reader never sees half of it
  return template;
}

function cacheDir(dir?: string): string {
  return dir ?? process.env['SAVEPOINT_CACHE_DIR'] ?? join(tmpdir(), 'savepoint-cache');
}

/**
 * State machine definitions that passed the interpreter's validation, remembered on disk by the
 * hash of their text (for LocalEngine's `validated`): validating compiles a JSON Schema, which
 * costs a new process ~150 ms and ~15 MB, and the same definition validates the same way. Also
 * keyed by the interpreter's version, so an upgrade validates again. A file that cannot be
 * written only means the next process validates again.
 */
export function validatedDefinitions(options: { dir?: string } = {}): { has(text: string): boolean; add(text: string): void } {
  const dir = cacheDir(options.dir);
  const marker = (text: string) => join(dir, `valid-asl-${createHash('sha256').update(INTERPRETER).update('\0').update(text).digest('hex').slice(0, 32)}`);
  const known = new Set<string>();
  return {
    has: (text) => known.has(text) || existsSync(marker(text)),
    add: (text) => {
      if (known.has(text)) return;
      known.add(text);
      try {
        mkdirSync(dir, { recursive: true });
        writeFileSync(marker(text), '');
      } catch {
        // only a cache
      }
    },
  };
}

const INTERPRETER = (() => {
  try {
    return String((JSON.parse(readFileSync(join(root, 'node_modules/aws-local-stepfunctions/package.json'), 'utf8')) as { version?: unknown }).version);
  } catch {
    return 'unknown';
  }
})();

function readTemplate(file: string, onNote?: (note: string) => void): CfnTemplate | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const template = JSON.parse(text) as CfnTemplate;
    if (typeof template?.Resources === 'object' && template.Resources !== null) return template;
  } catch {
    // not JSON: damaged
  }
  onNote?.(`${file}: not a synthesized template; synthesizing again`);
  return undefined;
}

/** The hash of every file under SOURCES (path and content), in a fixed order. */
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
