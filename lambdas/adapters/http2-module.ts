/**
 * `node:http2` as a step's bundle imports it (infra/step-bundle.ts aliases `http2` and
 * `node:http2` here). The SDK's HTTP handler imports the module's default export for its HTTP/2
 * handler, which no step uses (the clients take HTTP/1.1), and loading the module costs 6–12 ms of
 * every function's cold start (npm run bench -- --cold-start): the default export is the module
 * loaded on first use. The handler's module reads `constants` when it is evaluated, so that
 * object's members, too, are read from the module on first use.
 */
import type * as Http2 from 'node:http2';

let loaded: typeof Http2 | undefined;
const http2 = (): typeof Http2 => (loaded ??= process.getBuiltinModule('node:http2'));

const constants = new Proxy({} as typeof Http2.constants, {
  get: (_, name) => Reflect.get(http2().constants, name),
  has: (_, name) => Reflect.has(http2().constants, name),
  ownKeys: () => Reflect.ownKeys(http2().constants),
  // Configurable as the proxy reports it: a proxy may not report a property its (empty) target lacks as non-configurable.
  getOwnPropertyDescriptor: (_, name) => {
    const descriptor = Reflect.getOwnPropertyDescriptor(http2().constants, name);
    return descriptor && { ...descriptor, configurable: true };
  },
});

export default new Proxy({} as typeof Http2, {
  get: (_, name) => (name === 'constants' ? constants : Reflect.get(http2(), name)),
  has: (_, name) => Reflect.has(http2(), name),
});

// Each named export is the module's own, read when the bundle loads: esbuild drops the ones nothing
// imports (the calls are marked pure), so the module is loaded at the cold start only by a bundle
// whose code (an agent's tool, say) imports a name, as it was without this alias. A name missing
// here fails the bundle's build, not a cold start.
const member = <Name extends keyof typeof Http2>(name: Name): (typeof Http2)[Name] => http2()[name];
export const connect = /* @__PURE__ */ member('connect');
export const createServer = /* @__PURE__ */ member('createServer');
export const createSecureServer = /* @__PURE__ */ member('createSecureServer');
export const getDefaultSettings = /* @__PURE__ */ member('getDefaultSettings');
export const getPackedSettings = /* @__PURE__ */ member('getPackedSettings');
export const getUnpackedSettings = /* @__PURE__ */ member('getUnpackedSettings');
export const performServerHandshake = /* @__PURE__ */ member('performServerHandshake');
export const sensitiveHeaders = /* @__PURE__ */ member('sensitiveHeaders');
export const Http2ServerRequest = /* @__PURE__ */ member('Http2ServerRequest');
export const Http2ServerResponse = /* @__PURE__ */ member('Http2ServerResponse');
export { constants };
