/**
 * Step Functions' API throttling, as the service applies it: "Some Step Functions API actions are
 * throttled using a token bucket scheme to maintain service bandwidth", per account and Region
 * (Step Functions Developer Guide, service quotas, "Quotas related to API action throttling",
 * https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html; the table below is the
 * one for US East (N. Virginia), US West (Oregon) and Europe (Ireland), the local Region being
 * us-east-1). A call finds its bucket empty → `ThrottlingException` ("Rate exceeded", HTTP 400),
 * which the SDK retries with backoff as it retries any throttling error.
 *
 * Time is the caller's clock (an injected one in tests and simulations): local runs go faster
 * than real time, and a bucket read on the wall clock would throttle a test AWS would not.
 *
 * @example
 * const quotas = new SfnQuotas(() => clock.now().getTime());
 * quotas.take('GetExecutionHistory'); // throws LocalSfnError ThrottlingException when empty
 */
import { LocalSfnError } from './sfn-error.js';

export interface BucketQuota {
  /** Tokens the bucket holds when full (the burst). */
  readonly bucket: number;
  /** Tokens added per second. */
  readonly refillPerSecond: number;
}

/** The published per-account quotas of the API actions the local endpoint serves. */
export const STEP_FUNCTIONS_API_QUOTAS: Readonly<Record<string, BucketQuota>> = {
  DescribeExecution: { bucket: 300, refillPerSecond: 15 },
  DescribeStateMachine: { bucket: 200, refillPerSecond: 20 },
  DescribeStateMachineForExecution: { bucket: 200, refillPerSecond: 1 },
  GetExecutionHistory: { bucket: 400, refillPerSecond: 20 },
  ListExecutions: { bucket: 200, refillPerSecond: 5 },
  SendTaskFailure: { bucket: 3000, refillPerSecond: 500 },
  SendTaskHeartbeat: { bucket: 3000, refillPerSecond: 500 },
  SendTaskSuccess: { bucket: 3000, refillPerSecond: 500 },
  StartExecution: { bucket: 1300, refillPerSecond: 300 },
  StopExecution: { bucket: 1000, refillPerSecond: 200 },
};

/** A token bucket on a clock in milliseconds: starts full, refills continuously, never above its size. */
export class TokenBucket {
  readonly #quota: BucketQuota;
  readonly #now: () => number;
  #tokens: number;
  #at: number;

  constructor(quota: BucketQuota, now: () => number) {
    this.#quota = quota;
    this.#now = now;
    this.#tokens = quota.bucket;
    this.#at = now();
  }

  /** Takes one token if there is one. */
  tryTake(): boolean {
    const now = this.#now();
    // A clock that goes back (a test resetting it) refills nothing and takes nothing away.
    const elapsed = Math.max(0, now - this.#at);
    this.#tokens = Math.min(this.#quota.bucket, this.#tokens + (elapsed / 1000) * this.#quota.refillPerSecond);
    this.#at = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}

export class SfnQuotas {
  readonly #buckets = new Map<string, TokenBucket>();
  readonly #throttled = new Map<string, number>();
  readonly #admitted = new Map<string, number>();
  readonly #now: () => number;
  readonly #quotas: Readonly<Record<string, BucketQuota>>;

  /** @param quotas per action @default STEP_FUNCTIONS_API_QUOTAS */
  constructor(now: () => number, quotas: Readonly<Record<string, BucketQuota>> = STEP_FUNCTIONS_API_QUOTAS) {
    this.#now = now;
    this.#quotas = quotas;
  }

  /** Spends one token of the action's bucket, or throws ThrottlingException; an action without a quota is free. */
  take(operation: string): void {
    const quota = this.#quotas[operation];
    const admit = () => void this.#admitted.set(operation, (this.#admitted.get(operation) ?? 0) + 1);
    if (!quota) return admit();
    let bucket = this.#buckets.get(operation);
    if (!bucket) this.#buckets.set(operation, (bucket = new TokenBucket(quota, this.#now)));
    if (bucket.tryTake()) return admit();
    this.#throttled.set(operation, (this.#throttled.get(operation) ?? 0) + 1);
    throw new LocalSfnError('ThrottlingException', 'Rate exceeded');
  }

  /** Calls admitted so far, by action (the fleet benchmark's count of Step Functions calls). */
  admitted(): Record<string, number> {
    return Object.fromEntries(this.#admitted);
  }

  /** Calls refused so far, by action. */
  throttled(): Record<string, number> {
    return Object.fromEntries(this.#throttled);
  }
}
