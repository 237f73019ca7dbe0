import { createHash } from 'node:crypto';
import { RecentMap } from '../../lambdas/shared/recent-map.js';

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

export const MIN_CACHEABLE_TOKENS = 1024;
/**
 * Prefixes a BreakpointCache keeps: a run reads a few at a time (its previous turn's and the shared
 * one), so this holds a thousand runs in flight; ~100 bytes each, ~0.4 MB at most.
 */
export const DEFAULT_CACHED_PREFIXES = 4096;
/** Prompts a PrefixCache keeps: whole prompts, each compared on every request, so fewer. */
export const DEFAULT_CACHED_PROMPTS = 256;

export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

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
export class BreakpointCache {
  /** The cached prefixes' hashes, the least recently read or written first out. */
  readonly #stored: RecentMap<string, true>;
  readonly #minTokens: number;
  readonly #lookback: number;
  /**
   * The last request's blocks and the hash of each prefix: the next request begins with the same
   * blocks (a run's turn N+1 sends turn N's prompt again, every run the same tools and system
   * prompt), whose prefixes' hashes are then taken from here instead of hashed again.
   */
  #last: { texts: readonly string[]; hashes: readonly string[] } = { texts: [], hashes: [] };

  constructor(
    options: {
      /** The shortest prefix a breakpoint caches. @default MIN_CACHEABLE_TOKENS */
      minTokens?: number;
      /** Blocks before a breakpoint a request looks back through for a cached prefix. @default 20 */
      lookback?: number;
      /** Prefixes kept, the most recently read or written. @default DEFAULT_CACHED_PREFIXES */
      maxPrefixes?: number;
    } = {},
  ) {
    this.#minTokens = options.minTokens ?? MIN_CACHEABLE_TOKENS;
    this.#lookback = options.lookback ?? 20;
    this.#stored = new RecentMap(options.maxPrefixes ?? DEFAULT_CACHED_PREFIXES);
  }

  /** Prefixes cached now (at most `maxPrefixes`). */
  get size(): number {
    return this.#stored.size;
  }

  account(blocks: readonly PromptBlock[]): CacheUsage {
    // A hash chain: prefix i is identified by the hash of blocks 0..i, each prefix in O(1).
    const hashes: string[] = [];
    const tokens: number[] = [];
    let chars = 0;
    let previous = '';
    // Whether every block so far is the last request's: then so is the prefix's hash.
    let same = true;
    const before = this.#last;
    for (const [i, block] of blocks.entries()) {
      same &&= before.texts[i] === block.text;
      previous = same ? before.hashes[i]! : createHash('sha256').update(previous).update('\0').update(block.text).digest('hex');
      chars += block.text.length;
      hashes.push(previous);
      tokens.push(estimateTokens(chars));
    }
    this.#last = { texts: blocks.map((block) => block.text), hashes };
    const total = tokens.at(-1) ?? 0;
    const breakpoints = blocks.flatMap((block, i) => (block.breakpoint ? [i] : []));

    let hit = -1;
    for (const b of breakpoints) {
      for (let i = b; i >= Math.max(0, b - this.#lookback + 1); i -= 1) {
        // A read keeps the prefix, as the providers refresh a prefix's lifetime on each hit.
        if (i > hit && this.#stored.get(hashes[i] ?? '')) hit = i;
      }
    }
    const cacheRead = hit < 0 ? 0 : (tokens[hit] ?? 0);

    const last = breakpoints.at(-1);
    let cacheWrite = 0;
    if (last !== undefined && last > hit && (tokens[last] ?? 0) >= this.#minTokens) cacheWrite = (tokens[last] ?? 0) - cacheRead;
    for (const b of breakpoints) if ((tokens[b] ?? 0) >= this.#minTokens) this.#stored.set(hashes[b] ?? '', true);

    return { input: total - cacheRead - cacheWrite, cacheRead, cacheWrite };
  }
}

/**
 * OpenAI's model: automatic, no markers. The cached part is the longest prefix this prompt shares
 * with any earlier prompt, counted only from 1024 tokens and then in steps of 128 tokens.
 */
export class PrefixCache {
  /** The newest prompts, oldest first: every run's prompts begin with the tools and system prompt, so the newest share what the oldest did. */
  readonly #seen: string[] = [];
  readonly #maxPrompts: number;

  /** @param options.maxPrompts the newest prompts kept (@default DEFAULT_CACHED_PROMPTS) */
  constructor(options: { maxPrompts?: number } = {}) {
    this.#maxPrompts = options.maxPrompts ?? DEFAULT_CACHED_PROMPTS;
  }

  /** Prompts remembered now (at most `maxPrompts`). */
  get size(): number {
    return this.#seen.length;
  }

  /** Cached tokens of `prompt` (a rendering in which later turns extend earlier ones), then remembers it. */
  account(prompt: string): number {
    let longest = 0;
    for (const earlier of this.#seen) longest = Math.max(longest, commonPrefixLength(earlier, prompt));
    this.#seen.push(prompt);
    if (this.#seen.length > this.#maxPrompts) this.#seen.shift();
    // Whole tokens only: a token cut by the end of the shared prefix is not shared.
    const shared = Math.floor(longest / 4);
    if (shared < MIN_CACHEABLE_TOKENS) return 0;
    return MIN_CACHEABLE_TOKENS + Math.floor((shared - MIN_CACHEABLE_TOKENS) / 128) * 128;
  }
}

function commonPrefixLength(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i += 1;
  return i;
}
