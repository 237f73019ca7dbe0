/** Building blocks for an agent's simulated world (local runs and tests): seeded faults. */
export { faultInjector, seededRandom, type FaultOptions } from './random.js';
export { openJournal, recoverTornTail, type Journal } from './journal.js';
export { clip, describeToolError, quote, readCalls, readResult, type RecordedCall, type ResultRead } from './conversation.js';
export { parseJsonBody, ProviderApiError, readBody, sendJson, serveProvider } from './provider-http.js';
