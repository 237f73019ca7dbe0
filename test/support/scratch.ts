import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';

/**
 * A new directory named `prefix…` in the test run's directory (test/support/run-dir.ts), removed
 * when the run ends: what a test makes there is never left in the OS's temp directory. Outside a
 * vitest run (no run directory), in the OS's temp.
 */
export function scratchDir(prefix: string): string {
  return mkdtempSync(join(inject('runDir') ?? tmpdir(), prefix));
}
