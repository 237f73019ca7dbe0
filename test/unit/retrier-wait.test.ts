import { describe, expect, it } from 'vitest';
import { retrierWaitMs } from '../../local/engine/execution.js';

/**
 * The wait a Retrier asks before each retry on AWS (what the kit's clock skips through:
 * testing/index.ts skipRetryWaits): IntervalSeconds × BackoffRate^(attempt − 1), at most
 * MaxDelaySeconds; Step Functions' defaults are an interval of 1 s and a backoff rate of 2.0
 * (https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html).
 */
describe('retrierWaitMs', () => {
  it("backs each retry off by the Retrier's rate, up to its MaxDelaySeconds", () => {
    const transient = { IntervalSeconds: 1, BackoffRate: 2, MaxDelaySeconds: 30 };
    expect([1, 2, 3, 4, 5, 6, 7].map((attempt) => retrierWaitMs(transient, attempt))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
  });

  it('waits the same interval each time at a rate of 1, and takes the service defaults where the Retrier names none', () => {
    expect([1, 40].map((attempt) => retrierWaitMs({ IntervalSeconds: 30, BackoffRate: 1 }, attempt))).toEqual([30_000, 30_000]);
    expect([1, 2, 3].map((attempt) => retrierWaitMs({}, attempt))).toEqual([1_000, 2_000, 4_000]);
  });
});
