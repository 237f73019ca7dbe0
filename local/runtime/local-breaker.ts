import { BREAKER, type BreakerPolicy } from '../../lambdas/guards/breaker.js';

const LOCAL_TIME_SCALE = 1 / 50;

/** The circuit breaker of a local stack (and of a replay): AWS's policy, its times 50 times shorter. */
export const LOCAL_BREAKER: BreakerPolicy = {
  failures: BREAKER.failures,
  windowMs: BREAKER.windowMs * LOCAL_TIME_SCALE,
  openMs: BREAKER.openMs * LOCAL_TIME_SCALE,
  probeLeaseMs: BREAKER.probeLeaseMs * LOCAL_TIME_SCALE,
};
