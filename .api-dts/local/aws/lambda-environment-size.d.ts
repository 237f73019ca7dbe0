/** What Lambda answers a function whose environment is over the limit. */
export declare class EnvironmentTooLargeError extends Error {
    readonly $fault = "client";
    readonly statusCode = 400;
    constructor(message: string);
}
/** Refuses, as Lambda would, a function whose environment variables are over 4 KB, naming it. */
export declare function assertEnvironmentFits(logicalId: string, variables: Readonly<Record<string, unknown>>): void;
