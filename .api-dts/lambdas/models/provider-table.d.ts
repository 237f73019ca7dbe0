import * as z from 'zod';
import type { ModelClient } from '../records/messages.js';
import type { Price } from './price.js';
import type { ProviderDescriptor } from './provider.js';
/**
 * The model providers as a table of descriptors (provider.ts): the one place that answers, for any
 * provider, how a spec is parsed, what its configuration is, which variables and secrets fill it,
 * what its models cost, its OpenTelemetry name and how its client is built. Nothing else switches
 * on a provider's name. providers.ts holds the built-in table; a test may build its own.
 */
type AnyDescriptor = ProviderDescriptor<string, z.ZodType>;
/** A model chosen by configuration: `provider:model-id`. */
export interface ModelSpec<N extends string = string> {
    readonly provider: N;
    /** The provider's own model id, sent on the wire as is. */
    readonly model: string;
}
type ConfigShape<D extends readonly AnyDescriptor[]> = {
    /** Budget of one model call, connection to last byte (lambdas/shared/timing.ts). @default 60_000 */
    timeoutMs: z.ZodOptional<z.ZodNumber>;
} & {
    [P in D[number] as P['name']]: z.ZodOptional<P['config']>;
};
export interface ProviderTable<D extends readonly AnyDescriptor[] = readonly AnyDescriptor[]> {
    readonly descriptors: D;
    /** The providers' names, in the table's order (the order error messages list them in). */
    readonly names: readonly D[number]['name'][];
    /** Where and how to reach each provider: every part optional, checked by `create` for the chosen one. */
    readonly config: z.ZodObject<ConfigShape<D>, z.core.$strict>;
    /** The environment variables the providers read locally, in the table's order. */
    readonly env: readonly string[];
    descriptor(name: string): D[number] | undefined;
    /** A spec's provider and model id, or an `Agent.InvalidInput` error naming it. */
    parse(spec: string): ModelSpec<D[number]['name']>;
    /** Every provider's list prices, by `provider:model-id`. */
    prices(): Record<string, Price>;
    /** The client of one model, bound to it (see `boundTo`). */
    create(spec: string | ModelSpec, config: unknown): ModelClient;
}
export declare function formatModelSpec(spec: ModelSpec): string;
export declare function providerTable<const D extends readonly AnyDescriptor[]>(descriptors: D): ProviderTable<D>;
export {};
