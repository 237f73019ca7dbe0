/**
 * `node:http` without its ESM facade. `import { createServer } from 'node:http'` makes Node build a
 * facade over every export of the module, and reading them all loads Node's bundled undici: 30–50
 * ms of CPU in every process that imports it (Node 22), a quarter of what `savepoint status`
 * should cost in all. `process.getBuiltinModule` returns the module itself (Node ≥ 22.3, which
 * package.json's engines and the functions' runtime both exceed), so nothing else is loaded.
 * Types still come from `import type … from 'node:http'`.
 *
 * Loaded when first asked for, not when a module that may use it is imported: node:http (with
 * node:net and the streams it loads) costs ~3 ms of CPU, and a CLI command that reaches no server
 * (`savepoint replay`, which takes no lock of the state directory: cli/owner.ts) has no use for it.
 */
export function nodeHttp(): typeof import('node:http') {
  return process.getBuiltinModule('node:http');
}
