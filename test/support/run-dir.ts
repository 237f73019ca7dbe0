import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A directory that lives as long as this `vitest run`: what its test files make once and share (test/support/pack.ts). */
    runDir: string;
  }
}

/**
 * vitest's global setup (vitest.config.ts): a directory for the whole run, removed at its end. What
 * is kept there is made by the first test that needs it, from the sources as they are during this
 * run, so nothing in it can be stale and a run of one file makes only what that file uses.
 */
export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'savepoint-test-run-'));
  project.provide('runDir', dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
