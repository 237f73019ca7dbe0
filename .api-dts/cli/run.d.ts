import { z } from 'zod';
import { type RunReport } from '../lambdas/runs/report.js';
import { formatReport, type ExecutionFigures } from './format.js';
import { type PriceOverrides } from '../lambdas/models/prices.js';
import { type StopSignal } from './signals.js';
export declare const ApprovalMode: z.ZodEnum<{
    approve: "approve";
    prompt: "prompt";
    reject: "reject";
    wait: "wait";
}>;
export declare const RunOptions: z.ZodObject<{
    agent: z.ZodString;
    input: z.ZodOptional<z.ZodString>;
    runId: z.ZodOptional<z.ZodString>;
    model: z.ZodOptional<z.ZodString>;
    resume: z.ZodDefault<z.ZodBoolean>;
    force: z.ZodDefault<z.ZodBoolean>;
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
    failRate: z.ZodCoercedNumber<unknown>;
    seed: z.ZodCoercedNumber<unknown>;
    crashAt: z.ZodOptional<z.ZodPipe<z.ZodString, z.ZodTransform<{
        point: import("../local/runtime/crash.js").CrashPoint;
        tool: string | undefined;
        nth: number;
    }, string>>>;
    crashRate: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
    crashSeed: z.ZodOptional<z.ZodCoercedNumber<unknown>>;
    maxRecoveries: z.ZodOptional<z.ZodCoercedNumber<unknown>>;
    approve: z.ZodOptional<z.ZodEnum<{
        approve: "approve";
        prompt: "prompt";
        reject: "reject";
        wait: "wait";
    }>>;
    approvalTimeout: z.ZodOptional<z.ZodCoercedNumber<unknown>>;
    maxSteps: z.ZodOptional<z.ZodCoercedNumber<unknown>>;
    maxTokens: z.ZodOptional<z.ZodCoercedNumber<unknown>>;
    maxTokensPerTurn: z.ZodOptional<z.ZodCoercedNumber<unknown>>;
    maxDollars: z.ZodOptional<z.ZodCoercedNumber<unknown>>;
    maxWallSeconds: z.ZodOptional<z.ZodCoercedNumber<unknown>>;
    onBudgetExceeded: z.ZodOptional<z.ZodEnum<{
        ask: "ask";
        stop: "stop";
    }>>;
    stateDir: z.ZodString;
    memory: z.ZodBoolean;
    ledger: z.ZodOptional<z.ZodEnum<{
        dynalite: "dynalite";
        embedded: "embedded";
    }>>;
    worldData: z.ZodOptional<z.ZodString>;
    template: z.ZodOptional<z.ZodString>;
    prices: z.ZodOptional<z.ZodString>;
    json: z.ZodBoolean;
    consolePort: z.ZodOptional<z.ZodCoercedNumber<unknown>>;
}, z.core.$strip>;
export type RunOptions = z.infer<typeof RunOptions>;
/** How long an approval waits when nobody can answer (no terminal, `--approve wait`): then it escalates. */
export declare const UNATTENDED_APPROVAL_TIMEOUT_SECONDS = 1;
export interface RunOutcome {
    report: RunReport;
    execution: ExecutionFigures;
    action: string;
    /** The stop signal that ended the wait: the run is saved, not finished. */
    signal?: StopSignal;
}
/**
 * `savepoint run` / `savepoint resume`: starts the local stack, lets the watchdog resume the runs
 * a dead process left running, starts (or resumes) the run through the Step Functions API, shows
 * progress and approvals as they come, and reports from the ledger at the end.
 */
export declare function runCommand(raw: Record<string, unknown>, io: {
    out: (line: string) => void;
    err: (line: string) => void;
    interactive: boolean;
}): Promise<RunOutcome>;
/** 0 succeeded · 1 failed · 3 stopped by a guard (a budget, a loop, a kill). */
export declare function exitCodeOf(report: RunReport): number;
export { formatReport };
/** `--input`: JSON text, or the path of a JSON file; without it, the input the agent's world suggests. */
export declare function runInput(option: string | undefined, fallback: unknown, agentName: string): unknown;
/**
 * `--prices <file>`: price overrides by model spec, checked before anything starts; a file that
 * cannot be read, is not JSON or holds a bad price is refused once, naming the file and the field.
 */
export declare function pricesFile(path: string): PriceOverrides;
