export interface BucketQuota {
    /** Tokens the bucket holds when full (the burst). */
    readonly bucket: number;
    /** Tokens added per second. */
    readonly refillPerSecond: number;
}
/** The published per-account quotas of the API actions the local endpoint serves. */
export declare const STEP_FUNCTIONS_API_QUOTAS: Readonly<Record<string, BucketQuota>>;
/** A token bucket on a clock in milliseconds: starts full, refills continuously, never above its size. */
export declare class TokenBucket {
    #private;
    constructor(quota: BucketQuota, now: () => number);
    /** Takes one token if there is one. */
    tryTake(): boolean;
}
export declare class SfnQuotas {
    #private;
    /** @param quotas per action @default STEP_FUNCTIONS_API_QUOTAS */
    constructor(now: () => number, quotas?: Readonly<Record<string, BucketQuota>>);
    /** Spends one token of the action's bucket, or throws ThrottlingException; an action without a quota is free. */
    take(operation: string): void;
    /** Calls admitted so far, by action (the fleet benchmark's count of Step Functions calls). */
    admitted(): Record<string, number>;
    /** Calls refused so far, by action. */
    throttled(): Record<string, number>;
}
