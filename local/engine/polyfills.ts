/**
 * aws-local-stepfunctions@3 calls `Promise.withResolvers` (ES2024) in every Task state, which Node 20
 * does not have. Node 20 is not supported (package.json engines: 22.13 or later); the polyfill stays
 * because it costs nothing and keeps a Node 20 checkout running until it moves. Import this module
 * before the library runs anything.
 */
interface Resolvers<T> {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
}

const PromiseCtor = Promise as unknown as { withResolvers?: <T>() => Resolvers<T> };

if (typeof PromiseCtor.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T>(): Resolvers<T> {
      let resolve!: Resolvers<T>['resolve'];
      let reject!: Resolvers<T>['reject'];
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}

export {};
