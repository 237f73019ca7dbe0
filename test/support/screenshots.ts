import { join } from 'node:path';
import { scratchDir } from './scratch.js';

const DOCS = new URL('../../docs/', import.meta.url).pathname;
let scratch: string | undefined;

/**
 * Where a browser test saves its screenshot `name`: the README's own picture in docs/ when
 * `SAVEPOINT_UPDATE_SCREENSHOTS=1` (to refresh them on purpose), else a directory of the test run (removed
 * when it ends), so that running the tests leaves the working tree as it was.
 */
export function screenshotPath(name: string): string {
  if (process.env['SAVEPOINT_UPDATE_SCREENSHOTS'] === '1') return join(DOCS, name);
  scratch ??= scratchDir('savepoint-screenshots-');
  return join(scratch, name);
}
