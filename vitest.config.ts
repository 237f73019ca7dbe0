import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // Agents import savepoint by its package name (the package's `exports`), as a user's would.
    alias: [
      { find: /^savepoint$/, replacement: fileURLToPath(new URL('./lambdas/index.ts', import.meta.url)) },
      { find: /^savepoint\/sim$/, replacement: fileURLToPath(new URL('./sim/index.ts', import.meta.url)) },
    ],
  },
  test: {
    // A stray `.only` fails the run (vitest's default allows it outside CI, where it runs that test
    // alone and skips the rest of its file, green). Focus one test with `--allowOnly` on the command line.
    allowOnly: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    // A directory for the run, for what its files make once and share (the packed package).
    globalSetup: ['test/support/run-dir.ts'],
    // SAVEPOINT_TEST_CPU=<file>: each file's CPU, its child processes' included, as JSON lines.
    setupFiles: ['test/support/file-cpu.ts'],
    // One worker per core, not vitest's cores − 1 (one worker on a 2-core machine): the engine,
    // CLI and browser tests spend much of their time waiting on child processes and sockets.
    maxWorkers: availableParallelism(),
    projects: [
      {
        extends: true,
        // Plain functions and files, no emulator, no synth: they share workers (and their module
        // imports) instead of paying a fresh worker per file. `npx vitest run --project unit`.
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], isolate: false },
      },
      {
        extends: true,
        // Not isolated either: a fresh module graph per file re-imported the AWS SDK, the
        // interpreter and the CDK in every file (on test/engine, local, sim, providers and contract:
        // 75 s of CPU isolated, 38 s not). Files in a worker still run one after another, and each
        // starts and closes its own stacks, servers and state directories; a test that changes
        // process-wide state (process.env, fake timers) restores it in its own afterEach.
        test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: ['test/unit/**'], isolate: false },
      },
    ],
  },
});
