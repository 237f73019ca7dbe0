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
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
