/** Throws InvalidName for a name the service refuses. */
export declare function assertExecutionName(name: string): void;
/** The execution's input as its text and a copy of its value (a string is parsed as JSON); InvalidExecutionInput when refused. */
export declare function parseExecutionInput(input: unknown): {
    text: string;
    value: unknown;
};
/** A start with the name of `existing`: returns when it is the same start again (answer `existing`), else throws ExecutionAlreadyExists. */
export declare function assertSameStart(existing: {
    readonly status: string;
    readonly input: string;
}, executionArn: string, input: string): void;
