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
    // GOGC: the Go programs the tests start (TypeScript 7's tsc, esbuild) collect at 4x their default
    // heap growth, as bin/tsc.js runs the project's own compiles: the own-agent test's strict
    // consumer is a whole type check of aws-cdk-lib's declarations, whose types live to its end.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', GOGC: process.env.GOGC ?? '400' },
    // A directory for the run, for what its files make once and share (the packed package).
    globalSetup: ['test/support/run-dir.ts'],
    // SAVEPOINT_TEST_CPU=<file>: each file's CPU, its child processes' included, as JSON lines.
    setupFiles: ['test/support/file-cpu.ts'],
    // One worker per core, not vitest's cores − 1 (one worker on a 2-core machine): the engine,
    // CLI and browser tests spend much of their time waiting on child processes and sockets.
    maxWorkers: availableParallelism(),
    // One project, its files sharing a worker's module imports (not isolated): re-importing the AWS
    // SDK, the interpreter and the CDK for every file cost test/engine, local, sim, providers and
    // contract 75 s of CPU, against 38 s shared. Files in a worker still run one after another, and
    // each starts and closes its own stacks, servers and state directories; a test that changes
    // process-wide state (process.env, fake timers) restores it in its own afterEach. Not two
    // projects (unit and integration), as before: vitest keeps a worker for the next file only when
    // that file is of the worker's project, so files of the two, queued together, started fresh
    // workers that imported it all again (test/unit, engine, architecture, providers and sim: 43-50 s
    // of CPU as one project, 53-57 s as two, at load 5-10). The plain-function files alone:
    // `npx vitest run test/unit`.
    include: ['test/**/*.test.ts'],
    isolate: false,
  },
});
