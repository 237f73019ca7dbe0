import { type ConnectionLimits } from '../../lambdas/shared/loopback-server.js';
/**
 * A loopback endpoint speaking CloudFormation's `DescribeStacks` (AWS Query protocol, XML), so the
 * CLI's `--stack` path — the real @aws-sdk/client-cloudformation reading a stack's outputs — runs
 * here against the local engine: the outputs are the synthesized template's, with the values the
 * local stack has (its state machine, table and approval API). Like the engine's other loopback
 * endpoints it serves only requests that carry its credential (local/services/loopback-credential.ts): the
 * outputs it gives name the approval API with its credential, and `url` includes it.
 */
export interface LocalStackOutputs {
    stackName: string;
    outputs: {
        key: string;
        value: string;
        description?: string;
    }[];
}
export interface CfnTemplateOutputs {
    Outputs?: Record<string, {
        Description?: string;
        Value: unknown;
    }>;
}
/** The template's outputs, each valued by `valueOf(description)`; outputs it cannot value are left out. */
export declare function outputsFromTemplate(template: CfnTemplateOutputs, valueOf: (description: string) => string | undefined): LocalStackOutputs['outputs'];
export declare function startCfnEndpoint(stacks: LocalStackOutputs[], options?: {
    credential?: string;
    limits?: ConnectionLimits;
}): Promise<{
    url: string;
    close: () => Promise<void>;
}>;
