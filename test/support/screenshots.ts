import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const DOCS = new URL('../../docs/', import.meta.url).pathname;
let scratch: string | undefined;

/**
 * Where a browser test saves its screenshot `name`: the README's own picture in docs/ when
 * `SAVEPOINT_UPDATE_SCREENSHOTS=1` (to refresh them on purpose), else a temporary directory, so that
 * running the tests leaves the working tree as it was.
 */
export function screenshotPath(name: string): string {
  if (process.env['SAVEPOINT_UPDATE_SCREENSHOTS'] === '1') return join(DOCS, name);
  scratch ??= mkdtempSync(join(tmpdir(), 'savepoint-screenshots-'));
  return join(scratch, name);
}
