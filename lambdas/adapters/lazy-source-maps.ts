/**
 * Source-mapped stack traces for a step's bundle, at no cost to its cold start. Node's
 * `--enable-source-maps` parses the map of every file as it loads (3 MB beside a step's 0.8 MB
 * bundle when the maps carried the sources: ~27 ms of a 125 ms import, npm run bench -- --cold-start); a step that never formats a
 * stack pays it all the same. Here a file's map is read the first time a stack through that file
 * is formatted, and kept: the first error's trace costs what the import used to, later ones a
 * lookup per frame. Injected into each Lambda bundle by its build (infra/step-bundle.ts), so
 * it runs first, and only there: a local process keeps its own loader's maps (tsx, vitest).
 */
import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Each bundle file's map, parsed on first use, and the URL its sources are relative to (null: the file has none, or it cannot be read). */
const maps = new Map<string, { map: SourceMap; url: string } | null>();

function mapOf(file: string): { map: SourceMap; url: string } | null {
  let known = maps.get(file);
  if (known === undefined) {
    try {
      const path = file.startsWith('file:') ? fileURLToPath(file) : file;
      known = path.endsWith('.mjs') || path.endsWith('.js') ? { map: new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8'))), url: pathToFileURL(`${path}.map`).href } : null;
    } catch {
      known = null;
    }
    maps.set(file, known);
  }
  return known;
}

/** One frame as V8 writes it, at its place in the original source when the file's map has it. */
export function mappedFrame(site: NodeJS.CallSite): string {
  const file = site.getFileName();
  const line = site.getLineNumber();
  const column = site.getColumnNumber();
  const known = file && line !== null && column !== null ? mapOf(file) : null;
  const entry = known?.map.findEntry(line! - 1, column! - 1);
  if (!entry || !('originalSource' in entry)) return String(site);
  // As Node writes a mapped frame: the source's URL, resolved against the map's.
  const where = `${new URL(entry.originalSource, known!.url).href}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
  const name = site.getFunctionName();
  const type = site.getTypeName();
  const method = site.getMethodName();
  const callee = site.isConstructor() ? `new ${name ?? '<anonymous>'}` : name ? (type && method && type !== name && !name.startsWith(`${type}.`) && !site.isToplevel() ? `${type}.${name}` : name) : undefined;
  return `${site.isAsync() ? 'async ' : ''}${callee ? `${callee} (${where})` : where}`;
}

/** The first line of a stack: `Name: message`, as V8 writes it. */
function header(error: unknown): string {
  try {
    return Error.prototype.toString.call(error);
  } catch {
    return '<error>';
  }
}

/**
 * Formats every stack from here on through the bundle's maps, read when first needed (in place of
 * Node's own formatting). Does nothing when Node maps stacks itself (`--enable-source-maps`).
 */
export function installLazySourceMaps(): void {
  if (process.sourceMapsEnabled) return;
  Error.prepareStackTrace = (error, sites) => [header(error), ...sites.map((site) => `    at ${mappedFrame(site)}`)].join('\n');
}

installLazySourceMaps();
