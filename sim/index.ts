/** Building blocks for an agent's simulated world (local runs and tests): seeded faults. */
export { faultInjector, seededRandom, type FaultOptions } from './random.js';
export { openJournal, recoverTornTail, type Journal } from './journal.js';
export { clip } from '../lambdas/shared/text.js';
export { describeToolError, quote, readCalls, readResult, type RecordedCall, type ResultRead } from './conversation.js';
export { DROPPED, jsonReply, parseJsonBody, ProviderApiError, serveProvider, type ServedProvider, type ServiceReply, type ServiceRequest } from './provider-http.js';
