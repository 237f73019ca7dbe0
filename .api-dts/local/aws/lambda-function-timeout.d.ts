/** The longest `Timeout` Lambda takes, in seconds. */
export declare const MAX_TIMEOUT_SECONDS: number;
/** Whether Lambda takes `timeout` as a function's `Timeout`: whole seconds from 1 to 900. */
export declare function isFunctionTimeout(timeout: unknown): boolean;
/** A function's configured timeout (`Timeout`, seconds, in the template), in milliseconds. */
export declare function functionTimeoutMs(template: {
    Resources?: Record<string, {
        Properties?: Record<string, unknown>;
    }>;
}, functionLogicalId: string): number;
