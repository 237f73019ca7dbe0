import middy from '@middy/core';
import { getEventListeners } from 'node:events';
import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { TIMEOUT_EARLY_MS, timeoutEarlyError } from '../../lambdas/adapters/middleware.js';
import { ErrorNames } from '../../lambdas/shared/errors.js';
import { Steps } from '../../lambdas/shared/steps.js';
import { invokeLocally } from '../../local/runtime/handlers.js';
import { manualClock } from '../support/manual-clock.js';

/** A step function that runs until `finish` is called or its signal aborts; `started` once it runs. */
function hangingStep() {
  let finish!: (value: string) => void;
  let started!: (signal: AbortSignal) => void;
  const running = new Promise<AbortSignal>((resolve) => (started = resolve));
  const fn = (_event: unknown, signal?: AbortSignal) => {
    started(signal!);
    return new Promise<string>((resolve, reject) => {
      finish = resolve;
      signal!.addEventListener('abort', () => reject(signal!.reason), { once: true });
    });
  };
  return { fn, running, finish: (value: string) => finish(value) };
}

/** The invocation's outcome so far, read without waiting for it. */
function settled(invocation: Promise<unknown>) {
  const state: { done: boolean; value?: unknown; error?: unknown } = { done: false };
  invocation.then((value) => Object.assign(state, { done: true, value }), (error: unknown) => Object.assign(state, { done: true, error }));
  return state;
}

/** Lets the invocation's promises and middy's middlewares run (real yields; no time passes on the clock). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

const log = () => undefined;

// The failure middy's early timeout gives on AWS, after the step's error classifier (stepError):
// a retried Agent.Transient whose cause is middy's TimeoutError.
function expectTimedOut(error: unknown) {
  expect(error).toMatchObject({ name: ErrorNames.Transient, message: 'TimeoutError: [AbortError]: The operation was aborted.' });
  const cause = (error as Error).cause as Error;
  expect(cause.name).toBe('TimeoutError');
  expect(cause.message).toBe('[AbortError]: The operation was aborted.');
  expect(cause.cause).toEqual({ package: '@middy/core' });
}

describe('a local invocation’s function timeout', () => {
  it('aborts only the invocation that reaches it: another invocation of the same function in flight completes', async () => {
    const clock = manualClock();
    const short = hangingStep();
    const long = hangingStep();
    const timedOut = settled(invokeLocally(Steps.CallTool, short.fn, {}, { timeoutMs: 2_000, clock, log }));
    const completes = invokeLocally(Steps.CallTool, long.fn, {}, { timeoutMs: 60_000, clock, log });
    const [shortSignal, longSignal] = await Promise.all([short.running, long.running]);

    clock.advance(2_000 - TIMEOUT_EARLY_MS);
    await settle();

    expect(shortSignal.aborted).toBe(true);
    expectTimedOut(timedOut.error);
    expect(longSignal.aborted).toBe(false);
    long.finish('done');
    await expect(completes).resolves.toBe('done');
  });

  it('fires on the clock, TIMEOUT_EARLY_MS before the function’s timeout, with no real wait', async () => {
    const clock = manualClock();
    const step = hangingStep();
    const invocation = settled(invokeLocally(Steps.CallTool, step.fn, {}, { timeoutMs: 3_000, clock, log }));
    const signal = await step.running;

    clock.advance(3_000 - TIMEOUT_EARLY_MS - 1);
    await settle();
    expect(signal.aborted).toBe(false);
    expect(invocation.done).toBe(false);

    clock.advance(1);
    await settle();
    expect(signal.aborted).toBe(true);
    expectTimedOut(invocation.error);
  });

  it('still aborts on the Task’s timeout, before its own', async () => {
    const clock = manualClock();
    const step = hangingStep();
    const task = new AbortController();
    const invocation = settled(invokeLocally(Steps.CallTool, step.fn, {}, { timeoutMs: 60_000, clock, log, taskSignal: task.signal }));
    const signal = await step.running;

    task.abort(new Error('States.Timeout'));
    await settle();

    expect(signal.aborted).toBe(true);
    expect(invocation.error).toMatchObject({ message: 'States.Timeout' });
  });

  it('leaves nothing on the Task’s signal once an invocation is over, whether it returned, failed or timed out', async () => {
    const clock = manualClock();
    const task = new AbortController(); // lives as long as the Task: one invocation after another
    const returned = hangingStep();
    const done = invokeLocally(Steps.CallTool, returned.fn, {}, { timeoutMs: 60_000, clock, log, taskSignal: task.signal });
    await returned.running;
    returned.finish('ok');
    await expect(done).resolves.toBe('ok');
    const failed = invokeLocally(Steps.CallTool, () => Promise.reject(new Error('boom')), {}, { timeoutMs: 60_000, clock, log, taskSignal: task.signal });
    await expect(failed).rejects.toThrow('boom');
    const hung = hangingStep();
    const timedOut = settled(invokeLocally(Steps.CallTool, hung.fn, {}, { timeoutMs: 3_000, clock, log, taskSignal: task.signal }));
    await hung.running;
    clock.advance(3_000 - TIMEOUT_EARLY_MS);
    await settle();
    expectTimedOut(timedOut.error);

    expect(getEventListeners(task.signal, 'abort')).toHaveLength(0);
    expect(task.signal.aborted).toBe(false);
  });

  it('is needed: middy’s own early timeout, one signal per process, aborts another invocation in flight too', async () => {
    // Two invocations of one middy handler in one process, as the local runtime would run them with
    // middy's early timeout on: the first is due at once (0 ms: a yield, not a wait), the second
    // has a minute left, and answers when its signal aborts (so that no timer of it is left).
    const signals: AbortSignal[] = [];
    const handler = middy({ timeoutEarlyInMillis: TIMEOUT_EARLY_MS }).handler((_event: unknown, _context: Context, { signal }: { signal: AbortSignal }) => {
      signals.push(signal);
      return signals.length === 1 ? new Promise(() => undefined) : new Promise((resolve) => signal.addEventListener('abort', () => resolve('aborted'), { once: true }));
    });
    const due = handler({}, { getRemainingTimeInMillis: () => TIMEOUT_EARLY_MS } as Context).catch((thrown: unknown) => thrown as Error);
    const other = handler({}, { getRemainingTimeInMillis: () => 60_000 } as Context);

    expect(await due).toMatchObject({ name: 'TimeoutError' });
    await expect(other).resolves.toBe('aborted');
    expect(signals[1]!.aborted).toBe(true);
  });

  it('fails with the error middy’s own early timeout throws on AWS', async () => {
    // middy's default timeoutEarlyResponse, its timer due at once (0 ms: a yield, not a wait).
    const aws = middy({ timeoutEarlyInMillis: TIMEOUT_EARLY_MS }).handler(() => new Promise(() => undefined));
    const error = await aws({}, { getRemainingTimeInMillis: () => TIMEOUT_EARLY_MS } as Context).catch((thrown: unknown) => thrown as Error);
    const ours = timeoutEarlyError();
    expect({ name: ours.name, message: ours.message, cause: ours.cause }).toEqual({ name: error.name, message: error.message, cause: error.cause });
  });
});
