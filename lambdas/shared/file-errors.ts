/**
 * Node's error of a call by path names the path (`error.path`: `open`, `rename`, `mkdir` …); its
 * error of a read of an open descriptor does not, and a read is where a file replaced by a
 * directory fails (opening a directory to read succeeds; reading it is EISDIR). `readingFile`
 * gives such an error the path of the file read, as Node's own would carry it, so what tells it
 * names the file (cli/errors.ts `fileErrorMessage`).
 */
export function readingFile<T>(path: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    const fsError = error as NodeJS.ErrnoException;
    if (error instanceof Error && typeof fsError.code === 'string' && fsError.path === undefined) fsError.path = path;
    throw error;
  }
}
