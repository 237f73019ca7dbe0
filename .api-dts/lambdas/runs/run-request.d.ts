import * as z from 'zod';
import { type AgentDefinition } from '../define.js';
import { RunConfig } from '../records/ledger-records.js';
import { ForkRequest } from './fork.js';
/**
 * What asks for a run: a run request (`savepoint run`, `StartExecution`, the client) or the
 * nightly scheduled event, parsed into the one shape StartRun acts on. ExecutionStopped and
 * RecoverRun read the same shape back from an execution's input (runs/status-change.ts).
 */
/** Why a run (or every run) was killed: recorded in the sealed ledger, so bounded like an approval's reason. */
export declare const KillReason: z.ZodString;
export declare const RunId: z.ZodString;
/** A run started by a person or a script (`savepoint run`, `StartExecution`, the client). */
export declare const RunRequest: z.ZodObject<{
    runId: z.ZodOptional<z.ZodString>;
    input: z.ZodUnknown;
    config: z.ZodOptional<z.ZodObject<{
        maxSteps: z.ZodOptional<z.ZodDefault<z.ZodNumber>>;
        maxTokens: z.ZodOptional<z.ZodDefault<z.ZodNumber>>;
        maxDollars: z.ZodOptional<z.ZodDefault<z.ZodNumber>>;
        maxWallSeconds: z.ZodOptional<z.ZodDefault<z.ZodNumber>>;
        maxTokensPerTurn: z.ZodOptional<z.ZodDefault<z.ZodNumber>>;
        onBudgetExceeded: z.ZodOptional<z.ZodDefault<z.ZodEnum<{
            ask: "ask";
            stop: "stop";
        }>>>;
        budgetExtensionPercent: z.ZodOptional<z.ZodDefault<z.ZodNumber>>;
        approvalTimeoutSeconds: z.ZodOptional<z.ZodDefault<z.ZodNumber>>;
        historyEventsBeforeHandoff: z.ZodOptional<z.ZodDefault<z.ZodNumber>>;
    }, z.core.$strict>>;
    model: z.ZodOptional<z.ZodString>;
    force: z.ZodOptional<z.ZodBoolean>;
    startedBy: z.ZodOptional<z.ZodString>;
    startedByMac: z.ZodOptional<z.ZodString>;
    migrate: z.ZodOptional<z.ZodObject<{
        to: z.ZodString;
        by: z.ZodString;
    }, z.core.$strict>>;
    fork: z.ZodOptional<z.ZodObject<{
        from: z.ZodString;
        at: z.ZodNumber;
        effects: z.ZodDefault<z.ZodEnum<{
            dry: "dry";
            reuse: "reuse";
        }>>;
        freshBudget: z.ZodOptional<z.ZodBoolean>;
        results: z.ZodOptional<z.ZodArray<z.ZodObject<{
            call: z.ZodNumber;
            result: z.ZodUnknown & z.ZodType<{} | null, unknown, z.core.$ZodTypeInternals<{} | null, unknown>>;
        }, z.core.$strict>>>;
    }, z.core.$strict>>;
}, z.core.$strict>;
export type RunRequest = z.infer<typeof RunRequest>;
/** The EventBridge scheduled event (events/scheduled-event.json) that starts the nightly run. */
export declare const ScheduledEvent: z.ZodObject<{
    'detail-type': z.ZodLiteral<"Scheduled Event">;
    source: z.ZodLiteral<"aws.events">;
    time: z.ZodISODateTime;
}, z.core.$strip>;
export interface StartRequest {
    runId: string;
    input: unknown;
    config: Partial<RunConfig>;
    /** Normalized `provider:model-id`, when the request names one. */
    model?: string;
    force?: boolean;
    /** Only the schedule's: a run request's starter is proven by its MAC (runs/starter.ts), read by StartRun. */
    startedBy?: string;
    migrate?: {
        to: string;
        by: string;
    };
    fork?: ForkRequest;
}
/**
 * The run an event asks for. A scheduled event becomes the input the agent derives from its time
 * (e.g. the day before), under the run id of that input: a second delivery of the same event
 * (EventBridge delivers at least once) resumes or joins the same run instead of starting another.
 */
/**
 * Only the settings a request names, as its schema parsed them: the partial schema fills in every
 * default, which would override the agent's own budgets.
 */
export declare function namedConfig(raw: unknown, parsed: Partial<RunConfig> | undefined): Partial<RunConfig>;
export declare function runRequestFromEvent(agent: AgentDefinition, event: unknown): StartRequest;
/** The run id of an input: the agent's own rule, or its name and a hash of the input. */
export declare function runIdOf(agent: AgentDefinition, input: unknown): string;
/** `spec` normalized, or an error naming the field it came from. */
export declare function modelSpecOf(spec: string, field: string): string;
