import type { AgentDefinition } from '../define.js';
import * as z from 'zod';
/**
 * The EventBridge event Step Functions sends when an execution's status changes
 * (events/execution-failed.json, events/execution-aborted.json): what the rules on the agent state
 * machine deliver to ExecutionStopped and RecoverRun.
 */
export declare const ExecutionStatusChange: z.ZodObject<{
    'detail-type': z.ZodLiteral<"Step Functions Execution Status Change">;
    source: z.ZodLiteral<"aws.states">;
    time: z.ZodOptional<z.ZodString>;
    detail: z.ZodObject<{
        executionArn: z.ZodString;
        status: z.ZodEnum<{
            ABORTED: "ABORTED";
            FAILED: "FAILED";
            PENDING_REDRIVE: "PENDING_REDRIVE";
            RUNNING: "RUNNING";
            SUCCEEDED: "SUCCEEDED";
            TIMED_OUT: "TIMED_OUT";
        }>;
        stopDate: z.ZodOptional<z.ZodNullable<z.ZodNumber>>;
        input: z.ZodOptional<z.ZodNullable<z.ZodString>>;
        error: z.ZodOptional<z.ZodNullable<z.ZodString>>;
        cause: z.ZodOptional<z.ZodNullable<z.ZodString>>;
    }, z.core.$strip>;
}, z.core.$strip>;
/** The run an execution drives, from its input (a run request or the nightly event); none for another input. */
export declare function runIdOf(agent: AgentDefinition, input: string | null | undefined): string | undefined;
