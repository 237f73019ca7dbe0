/** What CloudFormation answers a create or update it refuses before it starts (error code ValidationError, HTTP 400). */
export declare class TemplateValidationError extends Error {
    readonly $fault = "client";
    readonly statusCode = 400;
    constructor(message: string);
}
/** Refuses, as CloudFormation would, a template it would not deploy (the rules above), naming the resource. */
export declare function assertDeployable(template: {
    Resources?: Record<string, unknown>;
}): void;
