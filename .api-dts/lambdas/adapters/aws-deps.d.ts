import * as z from 'zod';
import { type AgentDefinition, type TraceRedactor } from '../define.js';
import type { ModelRegistry } from '../models/registry.js';
import { type ModelSecretIds, type SecretSource } from '../models/secrets.js';
import { type AgentSteps, type HarnessDeps } from '../wiring/create-steps.js';
import type { AwsClients } from './aws-clients.js';
import { type Telemetry } from './middleware.js';
import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
export declare const StepEnvironment: z.ZodObject<{
    TABLE_NAME: z.ZodString;
    LEDGER_SEAL_SECRET_ARN: z.ZodString;
    MODEL: z.ZodOptional<z.ZodString>;
    PRICES: z.ZodOptional<z.ZodPipe<z.ZodPipe<z.ZodString, z.ZodTransform<unknown, string>>, z.ZodRecord<z.ZodString, z.ZodObject<{
        inputPerMTok: z.ZodNumber;
        outputPerMTok: z.ZodNumber;
        cacheWritePerMTok: z.ZodNumber;
        cacheReadPerMTok: z.ZodNumber;
    }, z.core.$strict>>>>;
    MAX_BUDGETS: z.ZodOptional<z.ZodPipe<z.ZodPipe<z.ZodString, z.ZodTransform<unknown, string>>, z.ZodObject<{
        maxSteps: z.ZodOptional<z.ZodNumber>;
        maxTokens: z.ZodOptional<z.ZodNumber>;
        maxDollars: z.ZodOptional<z.ZodNumber>;
        maxWallSeconds: z.ZodOptional<z.ZodNumber>;
        maxTokensPerTurn: z.ZodOptional<z.ZodNumber>;
    }, z.core.$strict>>>;
    CODE_VERSION: z.ZodString;
    TOOL_LEASE_MS: z.ZodCoercedNumber<unknown>;
    TOOL_TIMEOUT_MS: z.ZodCoercedNumber<unknown>;
    STATE_MACHINE_ARN: z.ZodString;
    KEEP_VERSIONS: z.ZodCoercedNumber<unknown>;
    MAX_RECOVERIES: z.ZodCoercedNumber<unknown>;
    APPROVAL_EVENT_BUS: z.ZodString;
    APPROVAL_TOPIC_ARN: z.ZodString;
    APPROVAL_LINK_SECRET_ARN: z.ZodString;
    APPROVAL_PAGE_URL: z.ZodURL;
    APPROVERS: z.ZodString;
    DECISION_KEY_ID: z.ZodString;
    STARTER_KEY_ID: z.ZodString;
    SEPARATION_OF_DUTIES: z.ZodEnum<{
        false: "false";
        true: "true";
    }>;
    SECOND_APPROVER_ABOVE_MINOR: z.ZodCoercedNumber<unknown>;
}, z.core.$strip>;
export type StepEnvironment = z.infer<typeof StepEnvironment>;
/**
 * The model clients of a function whose step calls a model (adapters/aws-models.ts): handed in
 * by its handler file, so that no other function's bundle holds a provider's SDK.
 */
export type ModelsFactory = (env: NodeJS.ProcessEnv, keys: ModelSecretIds, secrets: SecretSource) => ModelRegistry;
/**
 * One set of clients per container, shared by every invocation, each built on first use: a
 * function reads only the variables of the clients its step uses. Beside the ledger, a function
 * has only the clients its handler passes (`clients`, adapters/aws-clients.ts).
 */
export declare function awsDeps(env?: NodeJS.ProcessEnv, observe?: {
    traced?: <T>(client: T) => T;
    telemetry?: Telemetry;
    redactTrace?: TraceRedactor;
    tools?: AgentDefinition['tools'];
}, secrets?: SecretSource, modelsFactory?: ModelsFactory, clients?: AwsClients): HarnessDeps;
/**
 * The Lambda handlers of an agent's functions (lambdas/handlers/ pick theirs by step). A step that
 * calls a model is given `models` by its handler file, and each step the AWS clients it uses
 * (`clients`): a bundle holds only its own step's SDKs.
 */
export declare function lambdaHandlers(agent: AgentDefinition, options?: {
    env?: NodeJS.ProcessEnv;
    models?: ModelsFactory;
    clients?: AwsClients;
}): {
    step: (name: keyof AgentSteps) => middy.MiddyfiedHandler<unknown, unknown, Error, import("aws-lambda").Context, {}>;
    approvalApi: () => middy.MiddyfiedHandler<APIGatewayProxyEvent, APIGatewayProxyResult, Error, import("aws-lambda").Context, {}>;
    runsApi: () => middy.MiddyfiedHandler<APIGatewayProxyEvent, APIGatewayProxyResult, Error, import("aws-lambda").Context, {}>;
};
