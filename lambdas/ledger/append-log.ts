import { closeSync, existsSync, fstatSync, ftruncateSync, openSync, readSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { fileSync } from './file-sync.js';
import { dirname } from 'node:path';
import { readingFile } from '../shared/file-errors.js';

/** Where a line is in the log file: its first byte, and its length without the newline. */
export interface Span {
  readonly offset: number;
  readonly bytes: number;
}

export interface AppendLogOptions {
  /**
   * fdatasync after every append. Off by default, by measurement: an append is ~7 µs, an
   * fdatasync ~0.3–0.4 ms on this machine's ext4 disk, and an agent step makes ~5 writes, so
   * syncing each would take most of the 2 ms step budget. Without it, a crash of the process
   * loses nothing acknowledged (the write is in the kernel's page cache when `append` returns);
   * a crash of the OS or a power loss can lose the last few seconds of writes, the same trade
   * the on-disk dynalite (LevelDB, unsynced writes) makes.
   */
  readonly fsync?: boolean;
  /** Where notes go (a torn last line dropped, a compaction). */
  readonly onNote?: (note: string) => void;
}

/**
 * An append-only log of JSON lines, one per committed write. Its lines are read by whoever opens
 * it (`readLines`, streaming; `readLine`, one at a span), and checked there (ledger-index.ts).
 *
 * A line is acknowledged only once `append` returned, i.e. once its closing newline is written.
 * So bytes after the last newline are a line torn by a crash mid-append: never acknowledged, not
 * read, and cut (with a note) when the log is opened to append.
 */
export class AppendLog<T> {
  private constructor(
    readonly path: string,
    private fd: number,
    /** Bytes in the file: where the next line starts, and where a failed append is cut back to. */
    private size: number,
    /** Complete lines in the file. */
    private count: number,
    private readonly options: AppendLogOptions,
    /** Set when a failed append could not be undone: the file's tail is unknown, so no more writes. */
    private broken?: Error,
  ) {}

  /** A read-only descriptor of the file, for `readLine` (the append descriptor cannot read). */
  private reader?: number;

  /**
   * Opens the log to append after its first `lines` complete lines (`bytes` bytes, what a reader of
   * the whole file found: `readLines`), reading none of them. Bytes after them are a line torn by a
   * crash mid-append: cut, with a note.
   */
  static openToAppend<T>(path: string, end: { lines: number; bytes: number }, options: AppendLogOptions = {}): AppendLog<T> {
    if (existsSync(compactingPath(path))) unlinkSync(compactingPath(path));
    const fd = openSync(path, 'a', 0o600); // private: the state directory's files are its owner's only
    const size = fstatSync(fd).size;
    if (size > end.bytes) {
      ftruncateSync(fd, end.bytes);
      options.onNote?.(`${path}:${end.lines + 1}: dropped a torn last line (${size - end.bytes} bytes after the last newline, from a crash mid-append; it was never acknowledged)`);
    }
    return new AppendLog<T>(path, fd, end.bytes, end.lines, options);
  }

  /**
   * Reads the complete lines of the log at `path` one at a time, from byte `from` (a line's start)
   * on, without opening it for writing or holding it in memory (a reader that keeps only some lines
   * reads in memory flat in the file's size). Bytes after the last newline (a torn line) are left
   * as they are and not passed on. Returns the number of complete lines read.
   */
  static readLines(path: string, onLine: (text: string, index: number, span: Span) => void, options: { from?: number; chunkBytes?: number } = {}): number {
    if (!existsSync(path)) return 0;
    const chunkBytes = options.chunkBytes ?? 1 << 20;
    const fd = openSync(path, 'r');
    try {
      let offset = options.from ?? 0;
      // No larger than what there is to read (a small log is read again and again: each open, each
      // refresh of its index), but at least a page: the file may have grown since.
      const buffer = Buffer.alloc(Math.min(chunkBytes, Math.max(fstatSync(fd).size - offset, 4096)));
      let carry: Buffer[] = [];
      let count = 0;
      let position = offset;
      for (let read: number; (read = readingFile(path, () => readSync(fd, buffer, 0, buffer.length, position))) > 0; position += read) {
        let start = 0;
        for (let end = buffer.indexOf(0x0a, 0); end >= 0 && end < read; end = buffer.indexOf(0x0a, start)) {
          const piece = buffer.subarray(start, end);
          const whole = carry.length > 0 ? Buffer.concat([...carry, piece]) : piece;
          onLine(whole.toString('utf8'), count++, { offset, bytes: whole.length });
          offset += whole.length + 1;
          carry = [];
          start = end + 1;
        }
        if (start < read) carry.push(Buffer.from(buffer.subarray(start, read)));
      }
      return count;
    } finally {
      closeSync(fd);
    }
  }

  get bytes(): number {
    return this.size;
  }

  get lines(): number {
    return this.count;
  }

  /** Appends one line (JSON text without a newline); when this returns, the line survives a crash of the process. Returns where it is. */
  append(json: string): Span {
    if (this.broken) throw new Error(`${this.path}: the log is unwritable after an earlier failed append`, { cause: this.broken });
    const text = `${json}\n`;
    const length = Buffer.byteLength(text);
    try {
      // The text as it is (Node encodes it into the write, with no Buffer of ours to allocate and
      // collect: every write of a step comes here); a short write's rest from an encoded copy.
      let written = writeSync(this.fd, text);
      if (written < length) {
        const buffer = Buffer.from(text);
        while (written < length) written += writeSync(this.fd, buffer, written);
      }
      if (this.options.fsync) fileSync.data(this.fd);
    } catch (error) {
      // Cut back a partial line, so that the next append does not glue onto it and corrupt the log.
      try {
        ftruncateSync(this.fd, this.size);
      } catch (truncateError) {
        this.broken = truncateError as Error;
      }
      throw error;
    }
    const span = { offset: this.size, bytes: length - 1 };
    this.size += length;
    this.count += 1;
    return span;
  }

  /** The line at `span` (from `open`, `append` or `rewrite`), read back from the file. */
  readLine(span: Span): string {
    this.reader ??= openSync(this.path, 'r');
    return readSpan(this.reader, span, this.path);
  }

  /**
   * Replaces the log by `lines` (the live state), atomically: written to a temp file, fsynced,
   * renamed over the log, and the directory fsynced. A crash at any point leaves either the old
   * log or the new one.
   */
  rewrite(lines: Iterable<string>): Span[] {
    const temporary = compactingPath(this.path);
    const fd = openSync(temporary, 'w', 0o600);
    let size = 0;
    let count = 0;
    const spans: Span[] = [];
    try {
      for (const line of lines) {
        const buffer = Buffer.from(`${line}\n`);
        for (let written = 0; written < buffer.length; ) written += writeSync(fd, buffer, written);
        spans.push({ offset: size, bytes: buffer.length - 1 });
        size += buffer.length;
        count += 1;
      }
      fileSync.full(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, this.path);
    syncDirectory(dirname(this.path));
    closeSync(this.fd);
    this.fd = openSync(this.path, 'a', 0o600);
    // The reader still reads the old file (renamed over): it reopens on the next read.
    if (this.reader !== undefined) closeSync(this.reader);
    this.reader = undefined;
    this.size = size;
    this.count = count;
    return spans;
  }

  close(): void {
    closeSync(this.fd);
    if (this.reader !== undefined) closeSync(this.reader);
  }
}

const compactingPath = (path: string) => `${path}.compacting`;

/** The bytes at `span` of the file open at `fd`, as text. */
function readSpan(fd: number, span: Span, path: string): string {
  const buffer = Buffer.alloc(span.bytes);
  for (let read = 0; read < span.bytes; ) {
    const got = readingFile(path, () => readSync(fd, buffer, read, span.bytes - read, span.offset + read));
    if (got === 0) throw new Error(`${path}: the line at byte ${span.offset} is cut short (the file changed under the ledger)`);
    read += got;
  }
  return buffer.toString('utf8');
}

/** Reads lines of a log by where they are (`Span`), without opening it for writing: what a reader of an index needs. */
export class LogReader {
  private readonly fd: number;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'r');
  }

  /** The file's size in bytes. */
  get bytes(): number {
    return fstatSync(this.fd).size;
  }

  readLine(span: Span): string {
    return readSpan(this.fd, span, this.path);
  }

  close(): void {
    closeSync(this.fd);
  }
}

function syncDirectory(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fileSync.full(fd);
  } finally {
    closeSync(fd);
  }
}
