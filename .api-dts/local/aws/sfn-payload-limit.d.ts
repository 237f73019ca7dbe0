/** Whether `text` is over the quota in UTF-8 bytes. A UTF-16 unit is at most 3 bytes of UTF-8: most payloads are below the limit without counting. */
export declare function overPayloadLimit(text: string): boolean;
/**
 * How the execution ends when a state's (or task's) input or result is over the quota. The
 * result's wording is the service's (as for a state's output); the input's is the twin's own.
 */
export declare function dataLimitExceeded(stateName: string, what: 'input' | 'result'): {
    status: 'FAILED';
    error: 'States.DataLimitExceeded';
    cause: string;
};
