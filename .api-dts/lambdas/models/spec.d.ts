import { formatModelSpec, type ModelSpec as AnyModelSpec } from './provider-table.js';
/**
 * A model is chosen by configuration as `provider:model-id`, e.g. `anthropic:claude-sonnet-4-5` or
 * `bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0`. Only the first `:` separates: Bedrock ids
 * and ARNs contain colons of their own. The providers are the table's (providers.ts).
 */
export declare const PROVIDERS: readonly ("anthropic" | "bedrock" | "openai" | "sim")[];
export type Provider = (typeof PROVIDERS)[number];
export type ModelSpec = AnyModelSpec<Provider>;
export declare function parseModelSpec(spec: string): ModelSpec;
export { formatModelSpec };
