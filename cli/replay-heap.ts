import { setFlagsFromString } from 'node:v8';

/**
 * Runs of more steps than this are replayed with V8's young generation growing as usual.
 * bin/savepoint.js starts `savepoint replay` with it kept at its first size
 * (--semi-space-growth-factor=1, ONE_PASS_COMMANDS): ~5% less CPU for a run of about 100 steps,
 * -2 to -3 ms for 401, but +40 ms of ~290 for 1,001 steps and +75-100 ms of ~730 for 2,001, where
 * each scavenge of 1 MB copies more of what the replay holds (10 alternated pairs each, 2026-12-07,
 * load 2-5). Set back to V8's default once the run's record is read: 1,001 steps 340 -> 292 ms of
 * CPU, 2,001 steps 765 -> 690, as without the flag; the sample day's 102 unchanged (8 alternated
 * pairs each, load 0.6-0.7).
 */
export const LONG_REPLAY_STEPS = 500;

/** The V8 flags a replay of a run of `steps` sets once it has read the run: none for a short one. */
export function replayHeapFlags(steps: number): string[] {
  return steps > LONG_REPLAY_STEPS ? ['--semi-space-growth-factor=2'] : [];
}

/** Sets replayHeapFlags(steps) (before the replay allocates what it holds of the run). */
export function sizeHeapForReplay(steps: number): void {
  for (const flag of replayHeapFlags(steps)) setFlagsFromString(flag);
}
