/**
 * A value now or later: what a storage engine's primitives answer (the embedded engine at once, so
 * that its updates stay one synchronous section; the DynamoDB engine later).
 */
export type Maybe<T> = T | Promise<T>;

/** All the values, at once when all are there already. */
export function allOf<T>(values: readonly Maybe<T>[]): Maybe<T[]> {
  return values.some((value) => value instanceof Promise) ? Promise.all(values) : (values as T[]);
}

/**
 * `next(value)`, at once when `value` is there already (so a synchronous engine stays synchronous).
 * Not named `then`: a module that exports a `then` is a thenable, and a dynamic import of it never resolves to the module.
 */
export function andThen<T, R>(value: Maybe<T>, next: (value: T) => Maybe<R>): Maybe<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}
