import { appendFileSync, writeSync } from 'node:fs';
import { z } from 'zod';
import { CRASH_POINTS, type CrashPoint, type CrashPoints } from '../lambdas/steps/crash-points.js';
import { seededRandom } from '../sim/random.js';

/**
 * Crash injection for the local engine: the process ends with SIGKILL at a step boundary — no
 * `finally`, no flush, no graceful close, exactly what a dead Lambda or a killed host leaves
 * behind. Off unless asked for (`savepoint run --crash-at … | --crash-rate …`).
 */

/** `<point>[:<tool>][:<nth>]`, e.g. `after-commit:issue_refund` or `model-call:3`. */
export const CrashAt = z
  .string()
  .transform((spec, ctx) => {
    const [point, ...rest] = spec.split(':');
    if (!(CRASH_POINTS as string[]).includes(point ?? '')) {
      ctx.addIssue({ code: 'custom', message: `unknown crash point "${point}"; expected one of ${CRASH_POINTS.join(', ')}` });
      return z.NEVER;
    }
    const nthText = rest.length > 0 && /^\d+$/.test(rest.at(-1)!) ? rest.pop()! : '1';
    if (rest.length > 1 || Number(nthText) < 1) {
      ctx.addIssue({ code: 'custom', message: `expected <point>[:<tool>][:<nth>] with nth ≥ 1, got "${spec}"` });
      return z.NEVER;
    }
    return { point: point as CrashPoint, tool: rest[0], nth: Number(nthText) };
  });
export type CrashAt = z.output<typeof CrashAt>;

export interface CrashOptions {
  /** Die the nth time this point is reached (for a tool, if given). */
  readonly at?: CrashAt;
  /** Die at any boundary with this probability. */
  readonly rate?: number;
  readonly seed?: number;
  /** A JSON line per crash is appended here before the process dies (the benchmark counts them). */
  readonly logFile?: string;
}

/** How the process dies. Tests of the injector itself pass their own. */
export type Die = (point: CrashPoint, tools: readonly string[]) => never;

export const sigkill: Die = (point, tools) => {
  // Synchronous writes: nothing asynchronous runs after this line.
  writeSync(2, `savepoint: crash injected at ${point}${tools.length ? ` (${tools.join(', ')})` : ''}: SIGKILL\n`);
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable: SIGKILL did not end the process');
};

export function crashInjector(options: CrashOptions, die: Die = sigkill): CrashPoints {
  const random = seededRandom(options.seed ?? 1);
  let seen = 0;
  return {
    reached(point, tools) {
      const { at, rate = 0 } = options;
      const targeted = at !== undefined && at.point === point && (at.tool === undefined || tools.includes(at.tool)) && ++seen === at.nth;
      // Drawn at every boundary, so a seed gives the same sequence of decisions.
      const drawn = rate > 0 && random() < rate;
      if (!targeted && !drawn) return;
      if (options.logFile) appendFileSync(options.logFile, `${JSON.stringify({ point, tools, at: new Date().toISOString(), pid: process.pid })}\n`);
      die(point, tools);
    },
  };
}
