import { Duration } from 'aws-cdk-lib';
import { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import type { StepName } from '../lambdas/shared/steps.js';
export interface StepFunctionProps {
    /** Which step this function runs: its handler is `lambdas/handlers/<step>.ts`. */
    readonly step: StepName;
    /** The agent's module, bundled in place of `@savepoint/agent-entry` (the handlers import no agent by name). */
    readonly agentEntry: string;
    /** @default Duration.seconds(30) */
    readonly timeout?: Duration;
    /** @default 512 */
    readonly memorySize?: number;
    readonly environment?: Record<string, string>;
}
/**
 * A Lambda function for one step, with savepoint's defaults baked in: the newest Node.js runtime,
 * ARM64, X-Ray tracing, ESM bundled by the local esbuild with source maps beside, a log group with
 * a retention, and `SAVEPOINT_STEP` naming the step (the local engine maps Task states by it).
 */
export declare class StepFunction extends LambdaFunction {
    constructor(scope: Construct, id: string, props: StepFunctionProps);
}
