/**
 * Prompt caching as the providers document it, so that its effect on the bill is measured honestly
 * here. Tokens are estimated as characters / 4 throughout. No TTL: a test run is far shorter than
 * the 5-minute cache lifetime. But the simulated model lives as long as the local engine does,
 * through many runs, and each run's conversation is a prefix of its own: a cache that kept every
 * prefix would grow with every run for the life of the process. The providers forget a prefix
 * some minutes after its last use; with no clock here, each cache keeps its most recently used
 * entries instead (the defaults below), which holds what a run in progress reads — the prefix its
 * previous turn wrote, and the tools-and-system prefix every run shares — as long as fewer runs
 * than that are in flight.
 */
export declare const MIN_CACHEABLE_TOKENS = 1024;
/**
 * Prefixes a BreakpointCache keeps: a run reads a few at a time (its previous turn's and the shared
 * one), so this holds a thousand runs in flight; ~100 bytes each, ~0.4 MB at most.
 */
export declare const DEFAULT_CACHED_PREFIXES = 4096;
/** Prompts a PrefixCache keeps: whole prompts, each compared on every request, so fewer. */
export declare const DEFAULT_CACHED_PROMPTS = 256;
export declare function estimateTokens(chars: number): number;
/** One unit of the prompt in the provider's rendering order (tools, then system, then messages). */
export interface PromptBlock {
    /** The block as sent, minus the cache marker itself: what "byte-identical" compares. */
    readonly text: string;
    /** Whether the request put a cache breakpoint (`cache_control`, `cachePoint`) right after it. */
    readonly breakpoint: boolean;
}
export interface CacheUsage {
    /** Input tokens neither read from nor written to the cache. */
    input: number;
    cacheRead: number;
    cacheWrite: number;
}
/**
 * Anthropic's model (Bedrock's for Claude is the same): a breakpoint caches the prefix up to and
 * including its block, if that prefix is at least the minimum length. A request reads the longest
 * cached prefix that ends at one of its breakpoints or at one of the 20 blocks before each
 * breakpoint (the documented lookback), which is how turn N+1 — whose breakpoint has moved to its
 * own last block — still reads turn N's prefix. Everything from the hit to the last breakpoint is
 * written; what follows the last breakpoint is plain input.
 */
export declare class BreakpointCache {
    #private;
    constructor(options?: {
        /** The shortest prefix a breakpoint caches. @default MIN_CACHEABLE_TOKENS */
        minTokens?: number;
        /** Blocks before a breakpoint a request looks back through for a cached prefix. @default 20 */
        lookback?: number;
        /** Prefixes kept, the most recently read or written. @default DEFAULT_CACHED_PREFIXES */
        maxPrefixes?: number;
    });
    /** Prefixes cached now (at most `maxPrefixes`). */
    get size(): number;
    account(blocks: readonly PromptBlock[]): CacheUsage;
}
/**
 * OpenAI's model: automatic, no markers. The cached part is the longest prefix this prompt shares
 * with any earlier prompt, counted only from 1024 tokens and then in steps of 128 tokens.
 */
export declare class PrefixCache {
    #private;
    /** @param options.maxPrompts the newest prompts kept (@default DEFAULT_CACHED_PROMPTS) */
    constructor(options?: {
        maxPrompts?: number;
    });
    /** Prompts remembered now (at most `maxPrompts`). */
    get size(): number;
    /** Cached tokens of `prompt` (a rendering in which later turns extend earlier ones), then remembers it. */
    account(prompt: string): number;
}
