/**
 * An inline Map state runs at most 40 iterations at once, whatever its MaxConcurrency ("Using Map
 * state in Inline mode": "supports up to 40 concurrent iterations",
 * https://docs.aws.amazon.com/step-functions/latest/dg/state-map-inline.html). The interpreter
 * would run a higher MaxConcurrency as given: the engine caps it (local/engine/definition.ts).
 */
import { INLINE_MAP_MAX_CONCURRENCY } from '../../lambdas/shared/limits.js';

/** The iterations a Map of `maxConcurrency` runs at once, at most. */
export function inlineMapConcurrency(maxConcurrency: number): number {
  return maxConcurrency > INLINE_MAP_MAX_CONCURRENCY ? INLINE_MAP_MAX_CONCURRENCY : maxConcurrency;
}
