/**
 * `node:http` without its ESM facade. `import { createServer } from 'node:http'` makes Node build a
 * facade over every export of the module, and reading them all loads Node's bundled undici: 30–50
 * ms of CPU in every process that imports it (Node 22), a quarter of what `savepoint status`
 * should cost in all. `process.getBuiltinModule` returns the module itself (Node ≥ 22.3, which
 * package.json's engines and the functions' runtime both exceed), so nothing else is loaded.
 * Types still come from `import type … from 'node:http'`.
 */
export const http = process.getBuiltinModule('node:http');
