import { type ConverseCommandInput, type ConverseCommandOutput } from '@aws-sdk/client-bedrock-runtime';
import { MessageResponse, type MessageRequest, type ModelClient } from '../records/messages.js';
export interface BedrockClientOptions {
    region: string;
    /** e.g. a VPC endpoint, or the local wire server. @default the regional endpoint */
    endpoint?: string | undefined;
    /** @default the SDK's provider chain (the Lambda role on AWS) */
    credentials?: {
        accessKeyId: string;
        secretAccessKey: string;
        sessionToken?: string | undefined;
    } | undefined;
    /** Budget of one call. @default 60_000 */
    timeoutMs?: number | undefined;
    /**
     * Whether to send `cachePoint` blocks. Models without prompt caching refuse them (a
     * ValidationException): turn off for those. @default true
     */
    promptCaching?: boolean | undefined;
}
/**
 * A `ModelClient` on the Bedrock Converse API through `@aws-sdk/client-bedrock-runtime`: IAM, no key.
 * Translates the ledger's Anthropic-like shape to Converse (`toolUse` / `toolResult` blocks,
 * `toolSpec.inputSchema.json`) and places three `cachePoint` blocks — after the system prompt, after
 * the tools and after the last block of the conversation — so that each turn reads the previous
 * turn's prefix from the cache.
 */
export declare class BedrockModelClient implements ModelClient {
    #private;
    constructor(options: BedrockClientOptions);
    createMessage(request: MessageRequest, signal?: AbortSignal): Promise<MessageResponse>;
}
/** The ledger's request as Converse input, with its cache points. Pure: exported for tests. */
export declare function toConverseInput(request: MessageRequest, caching?: boolean): ConverseCommandInput;
/** The SDK's output back in the ledger's shape, validated: model output is outside input. */
export declare function fromConverseOutput(output: ConverseCommandOutput, model: string): MessageResponse;
