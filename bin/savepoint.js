#!/usr/bin/env node
// The savepoint CLI. The project runs its TypeScript sources directly (tsx), locally and in CI.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const { register } = await import('tsx/esm/api');
register();
await import('../cli/savepoint.ts');
