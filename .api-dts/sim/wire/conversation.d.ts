import type { MessageRequest } from '../../lambdas/records/messages.js';
/**
 * The conversation rules the providers enforce, checked on the ledger's shape once a server has
 * translated its wire request into it. Returns the first problem, worded like a provider's 400, or
 * undefined when the conversation is well formed.
 */
export declare function conversationProblem(request: MessageRequest): string | undefined;
