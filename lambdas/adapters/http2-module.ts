/**
 * `node:http2` as a step's bundle imports it (infra/step-function.ts aliases `http2` and
 * `node:http2` here): loaded on first use, not at the cold start. The SDK's HTTP handler imports it
 * for its HTTP/2 handler, which no step uses (the clients take HTTP/1.1), and loading the module
 * costs 6–12 ms of every function's cold start (npm run bench -- --cold-start). The handler's module
 * reads `constants` when it is evaluated: that object's members, too, are read from the module on
 * first use.
 */
import type * as Http2 from 'node:http2';

let loaded: typeof Http2 | undefined;
const http2 = (): typeof Http2 => (loaded ??= process.getBuiltinModule('node:http2'));

const constants = new Proxy({} as typeof Http2.constants, {
  get: (_, name) => Reflect.get(http2().constants, name),
  has: (_, name) => Reflect.has(http2().constants, name),
  ownKeys: () => Reflect.ownKeys(http2().constants),
  getOwnPropertyDescriptor: (_, name) => Reflect.getOwnPropertyDescriptor(http2().constants, name),
});

export default new Proxy({} as typeof Http2, {
  get: (_, name) => (name === 'constants' ? constants : Reflect.get(http2(), name)),
  has: (_, name) => Reflect.has(http2(), name),
});
