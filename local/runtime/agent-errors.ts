import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { causeMessage, causeTrace } from '../../lambdas/shared/errors.js';

/**
 * An error the agent's own code threw as its module loaded (a throw at its top level, a property of
 * undefined read there, a `defineAgent` it called with a bad setting), said with the module and the
 * place in the user's code: the CLI prints an error's message alone, which named neither. The place
 * is the first frame of the error's stack that is the user's code — a file of theirs, or the
 * agent's bundle (bin/bundle.js), mapped back through its source map to the file and line they
 * wrote. Undefined when no frame is theirs: an error of savepoint's own (a build that failed,
 * esbuild missing) is said as it is.
 *
 * `own`: the directories of savepoint's own code (its package, its CLI bundle's sources); a file in
 * them, or in any node_modules, is not the user's.
 */
export function agentLoadError(module: string, error: unknown, own: readonly string[]): Error | undefined {
  if (!(error instanceof Error) || typeof error.stack !== 'string') return undefined;
  const place = userCodePlace(error.stack, own);
  if (!place) return undefined;
  return new Error(`agent ${module} failed to load: ${error.message} (at ${place})`, { cause: error });
}

/**
 * An execution's failure in one line (`savepoint run`'s and the testing kit's run that did not
 * start): the error and its message (a Lambda error's cause is the JSON of errorType, errorMessage
 * and trace), and where in the user's code it was thrown, when it was (the agent's `prompt`, a
 * hook of its own), put back in the file they wrote.
 */
export function executionFailure(error: string | undefined, cause: string | undefined, own: readonly string[]): string {
  const trace = causeTrace(cause);
  const place = trace === undefined ? undefined : userCodePlace(trace, own);
  return `${error ?? 'no error'}: ${causeMessage(cause)}${place ? ` (at ${place})` : ''}`;
}

/**
 * `stack` with each frame in a bundled file (the agent's bundle, the CLI's) put back where it was
 * written, through the source map beside the file: the stack of a tool's failure as the engine's
 * log keeps it, the user's own file and line (the Lambda bundles map theirs themselves).
 */
export function sourceMappedStack(stack: string): string {
  return stack
    .split('\n')
    .map((line) => {
      const frame = writtenAt(line);
      return frame?.mapped ? line.replace(frame.text, frame.at) : line;
    })
    .join('\n');
}

/** The first frame of `stack` in the user's code (not `own`, not node_modules), as `file:line:column` where it was written; undefined when none is. */
export function userCodePlace(stack: string, own: readonly string[]): string | undefined {
  for (const line of stack.split('\n')) {
    const frame = writtenAt(line);
    if (frame && isUsers(frame.file, own)) return frame.at;
  }
  return undefined;
}

/** A stack line's file, line and column (`at f (file:line:col)` or `at file:line:col`). */
const FRAME = /^\s+at (?:async )?(?:.*? \()?((?:file:\/\/)?\/[^()]*?):(\d+):(\d+)\)?$/;

/**
 * A stack line's frame where it was written (through the source map beside a bundled file): `text`,
 * the place as the line says it; `at`, the written place (`file:line:column`); `file`, the written
 * file; `mapped`, whether a source map moved it.
 */
function writtenAt(line: string): { text: string; at: string; file: string; mapped: boolean } | undefined {
  const frame = FRAME.exec(line);
  if (!frame) return undefined;
  const file = frame[1]!.startsWith('file://') ? fileURLToPath(frame[1]!) : frame[1]!;
  const [source, lineNumber, column] = original(file, Number(frame[2]), Number(frame[3]));
  return { text: `${frame[1]}:${frame[2]}:${frame[3]}`, at: `${source}:${lineNumber}:${column}`, file: source, mapped: source !== file };
}

/** Where a position of a bundled file was written, through the source map beside it; the position itself when it has none. */
function original(file: string, line: number, column: number): [string, number, number] {
  const map = sourceMapOf(file);
  if (!map) return [file, line, column];
  try {
    const entry = map.findEntry(line - 1, column - 1) as { originalSource?: string; originalLine?: number; originalColumn?: number };
    if (entry.originalSource === undefined) return [file, line, column];
    const source = entry.originalSource.startsWith('file://') ? fileURLToPath(entry.originalSource) : resolve(dirname(file), entry.originalSource);
    return [source, entry.originalLine! + 1, entry.originalColumn! + 1];
  } catch {
    return [file, line, column];
  }
}

/** The source map beside a bundled file, kept for the next stack (null: it has none, or none that parses); the most recent MAX_MAPS. */
const maps = new Map<string, SourceMap | null>();
const MAX_MAPS = 32;
function sourceMapOf(file: string): SourceMap | undefined {
  if (!maps.has(file)) {
    if (maps.size >= MAX_MAPS) maps.delete(maps.keys().next().value!);
    let map: SourceMap | null = null;
    try {
      if (existsSync(`${file}.map`)) map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')) as ConstructorParameters<typeof SourceMap>[0]);
    } catch {
      map = null;
    }
    maps.set(file, map);
  }
  return maps.get(file) ?? undefined;
}

function isUsers(file: string, own: readonly string[]): boolean {
  if (file.split(sep).includes('node_modules')) return false;
  return !own.some((dir) => file === dir || file.startsWith(dir.endsWith(sep) ? dir : dir + sep));
}
