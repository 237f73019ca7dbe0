import { closeSync, existsSync, fstatSync, fsyncSync, openSync, readFileSync, readSync, truncateSync, writeSync } from 'node:fs';
import type { z } from 'zod';
import { readingFile } from '../lambdas/shared/file-errors.js';

/**
 * The append-only JSON-lines journal a simulated provider commits to before it answers (so a lost
 * response still means the side effect happened), replayed when the provider starts again.
 *
 * Each entry is one `write` ending in a newline, so a last line without its newline is a write
 * torn by a crash: its response was never sent, so it never happened. It is cut off the file (as a
 * write-ahead log recovers its tail) and reported — left in place, the next append would land on
 * the fragment and make a corrupt line in the middle, which is refused, naming the file and line.
 */
export interface Journal<Entry> {
  /**
   * Every entry in the file, read when asked: those appended since opening included, by this
   * journal or by another process on the same file (a killed engine's provider, a test counting).
   */
  readonly entries: readonly Entry[];
  /** What opening had to repair (a torn last line), for the operator; undefined when nothing. */
  readonly recovered?: string;
  /** Appends one entry, durably, before it returns. */
  append(entry: Entry): void;
  /** Closes the file. */
  close(): void;
}

/** Opens the journal at `dataFile`, or an in-memory one when there is no file. */
export function openJournal<S extends z.ZodType>(dataFile: string | undefined, schema: S): Journal<z.output<S>> {
  if (!dataFile) return { entries: [], append: () => undefined, close: () => undefined };
  const recovered = existsSync(dataFile) ? recoverTornTail(dataFile) : undefined;
  const fd = openSync(dataFile, 'a+');
  // What has been read so far: the complete lines up to `read` bytes (a line still being
  // appended by another process waits for its newline).
  const entries: z.output<S>[] = [];
  let read = 0;
  let line = 0;
  const catchUp = () => {
    const size = fstatSync(fd).size;
    if (size <= read) return entries;
    const bytes = Buffer.alloc(size - read);
    readSync(fd, bytes, 0, bytes.length, read);
    const end = bytes.lastIndexOf(0x0a) + 1;
    if (end === 0) return entries;
    const parsed = parseJournal(dataFile, bytes.subarray(0, end).toString('utf8'), schema, line);
    entries.push(...parsed);
    line += parsed.length;
    read += end;
    return entries;
  };
  catchUp();
  return {
    get entries() {
      return catchUp();
    },
    ...(recovered && { recovered }),
    append(entry) {
      writeSync(fd, `${JSON.stringify(entry)}\n`);
      fsyncSync(fd);
    },
    close: () => closeSync(fd),
  };
}

/**
 * Truncates a torn last line (the bytes after the last newline) away and says what it dropped;
 * undefined when the journal ends cleanly.
 */
export function recoverTornTail(dataFile: string): string | undefined {
  const bytes = readingFile(dataFile, () => readFileSync(dataFile));
  const end = bytes.lastIndexOf(0x0a) + 1; // 0 when no line is complete
  if (end === bytes.length) return undefined;
  truncateSync(dataFile, end);
  const line = bytes.subarray(0, end).toString('utf8').split('\n').length;
  return `${dataFile}:${line}: dropped a torn last line (${bytes.length - end} bytes, no newline) left by a crash mid-append; its request was never answered`;
}

/** The complete lines of a journal, each an entry; a line that is not one names the file and line. */
function parseJournal<S extends z.ZodType>(dataFile: string, text: string, schema: S, linesBefore = 0): z.output<S>[] {
  const lines = text.split('\n');
  lines.pop(); // the text after the last newline: '' (a torn tail was cut off on open)
  return lines.map((line, index) => {
    try {
      return schema.parse(JSON.parse(line));
    } catch (error) {
      throw new Error(`${dataFile}:${linesBefore + index + 1}: corrupt journal line (only the last line can be torn by a crash, and is recovered; this one was damaged: repair or remove it)`, { cause: error });
    }
  });
}
