/** The Anthropic API versions the strict server (sim/wire/anthropic-server.ts) speaks: light, so `savepoint/sim` exports them without loading the server. */
/**
 * The API versions the server speaks. `@anthropic-ai/sdk` 1.x sends 2026-10-21, which refuses the
 * sampling parameters (temperature, top_p, top_k) with a 400; older clients, such as the hand-written
 * `HttpMessagesClient`, send 2023-06-01.
 */
export const ANTHROPIC_VERSIONS = ['2023-06-01', '2026-10-21'] as const;
export const ANTHROPIC_VERSION = '2026-10-21';
