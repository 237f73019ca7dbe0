import type { Timers } from '../../lambdas/shared/ports.js';
/**
 * Where the engine's Task timers run (TimeoutSeconds, HeartbeatSeconds): the steps' `Timers`
 * (lambdas/shared/ports.ts). By default real timers; a clock a test moves by hand can run them
 * instead, so that a Task times out the moment the clock passes its deadline, with no real wait
 * (test/engine/stops.test.ts).
 */
export type { Timers };
/**
 * Real timers that keep the process alive while they are pending, unlike the steps' `realTimers`:
 * a Task being timed is what the engine waits for, so its timeout must still fire when nothing
 * else is left to run (a tool hung on a promise).
 */
export declare const keepAliveTimers: Timers;
