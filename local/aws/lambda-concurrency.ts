/**
 * Lambda's concurrency (Lambda Developer Guide, "Understanding Lambda function scaling",
 * https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html, and "Configuring reserved
 * concurrency", https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html):
 *
 *   - an account runs at most its concurrency quota of invocations at once in a Region (1,000 by
 *     default); an invocation over it is throttled: the Invoke API answers 429
 *     TooManyRequestsException ("Rate Exceeded."), which a Step Functions Task reports as
 *     `Lambda.TooManyRequestsException` — retried by the state machine's `Retry` (infra/
 *     agent-state-machine.ts LAMBDA_SERVICE_ERRORS), so no step is lost;
 *   - a function's reserved concurrency (`ReservedConcurrentExecutions`) is both its own ceiling
 *     and carved out of the account's pool: the other functions share what is left, and it is
 *     throttled past its reservation even while the account has room (0 throttles every invoke);
 *   - reservations must leave at least 100 to the functions that reserve none: a template that
 *     reserves more fails its deploy with InvalidParameterValueException "Specified
 *     ReservedConcurrentExecutions for function decreases account's UnreservedConcurrentExecution
 *     below its minimum value of [100]."
 *
 * The local stack counts every Lambda invocation its engine makes against these rules
 * (local/runtime/tasks.ts), the account's quota being `LocalStackOptions.lambdaConcurrency`.
 */
import { LAMBDA_ACCOUNT_CONCURRENCY, LAMBDA_MIN_UNRESERVED_CONCURRENCY } from '../../lambdas/shared/limits.js';
import { AwsClientError } from './client-error.js';

/** What Lambda answers an invoke over the account's or the function's concurrency. */
export class TooManyRequestsError extends AwsClientError {
  constructor(functionName: string) {
    super('TooManyRequestsException', `Rate Exceeded. (Service: AWSLambda; Status Code: 429; Error Code: TooManyRequestsException; function ${functionName})`, 429);
  }
}

/** What Lambda answers a deploy whose reservations leave less than 100 unreserved. */
export class ReservedConcurrencyError extends AwsClientError {
  constructor(message: string) {
    super('InvalidParameterValueException', message);
  }
}

/** The functions' reservations a template declares (`ReservedConcurrentExecutions`), by logical id. */
export function reservedConcurrency(template: { Resources?: Record<string, { Type?: string; Properties?: Record<string, unknown> }> }): Map<string, number> {
  const reserved = new Map<string, number>();
  for (const [logicalId, resource] of Object.entries(template.Resources ?? {})) {
    const value = resource.Properties?.['ReservedConcurrentExecutions'];
    if (resource.Type === 'AWS::Lambda::Function' && typeof value === 'number') reserved.set(logicalId, value);
  }
  return reserved;
}

/** The account's concurrency as Lambda keeps it: invocations running now, per function and in all. */
export class LambdaConcurrency {
  private readonly running = new Map<string, number>();
  private unreservedRunning = 0;
  /** All invocations running now, kept beside `running` (every invoke asks it: no sum over the functions). */
  private allRunning = 0;
  private reserved = new Map<string, number>();
  /** The sum of `reserved`, worked out once per deploy (every invoke asks what is left unreserved). */
  private reservedTotal = 0;
  readonly accountLimit: number;
  /** Invocations throttled so far (what CloudWatch's `Throttles` would sum). */
  throttles = 0;
  /** The most invocations running at once so far (CloudWatch's `ConcurrentExecutions` maximum). */
  peak = 0;

  constructor(accountLimit: number = LAMBDA_ACCOUNT_CONCURRENCY) {
    if (!Number.isInteger(accountLimit) || accountLimit < 1) throw new RangeError(`lambdaConcurrency must be a whole number ≥ 1, got ${accountLimit}`);
    this.accountLimit = accountLimit;
  }

  /**
   * The reservations of a template being deployed: refused, as Lambda refuses them, when they leave
   * less than 100 to the rest (so an account whose quota is under 100 reserves nothing).
   */
  reserve(reserved: ReadonlyMap<string, number>): void {
    const total = [...reserved.values()].reduce((sum, n) => sum + n, 0);
    const floor = LAMBDA_MIN_UNRESERVED_CONCURRENCY;
    if (total > 0 && this.accountLimit - total < floor) {
      throw new ReservedConcurrencyError(
        `Specified ReservedConcurrentExecutions for function decreases account's UnreservedConcurrentExecution below its minimum value of [${floor}]: ${total} reserved of ${this.accountLimit}`,
      );
    }
    this.reserved = new Map(reserved);
    this.reservedTotal = total;
  }

  /** Admits one invocation of `functionName` (returns its release), or throws TooManyRequestsException. */
  acquire(functionName: string): () => void {
    const reservation = this.reserved.get(functionName);
    const running = this.running.get(functionName) ?? 0;
    const unreservedPool = this.accountLimit - this.reservedTotal;
    const full = reservation !== undefined ? running >= reservation : this.unreservedRunning >= unreservedPool;
    if (full) {
      this.throttles += 1;
      throw new TooManyRequestsError(functionName);
    }
    this.running.set(functionName, running + 1);
    if (reservation === undefined) this.unreservedRunning += 1;
    this.allRunning += 1;
    this.peak = Math.max(this.peak, this.allRunning);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running.set(functionName, (this.running.get(functionName) ?? 1) - 1);
      if (reservation === undefined) this.unreservedRunning -= 1;
      this.allRunning -= 1;
    };
  }
}
