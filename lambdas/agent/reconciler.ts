import { createHash } from 'node:crypto';
import { PRICE_TABLE } from './prices.js';
import { toolSpecs } from './tools.js';

/** The refund reconciler: the agent this project ships with. */
export const RECONCILER = {
  name: 'refund-reconciler',
  model: 'savepoint-sim-1',
  system: [
    'You reconcile the refund requests customers filed on one day.',
    'For each request, look up its order and payment, then decide:',
    '- a request already refunded: skip it;',
    '- a requested amount above the order total or above what is left to refund: flag it for review;',
    '- otherwise: issue the refund, once.',
    'A refund that is rejected or not approved in time is flagged for review. Never retry a refund that failed.',
    'When every request is decided, post the report of the day, then stop.',
  ].join('\n'),
  userPrompt: (runDate: string) => `Reconcile the refund requests of ${runDate}.`,
} as const;

/**
 * What a run is bound to: the prompt, the model, the tool schemas and the price table. A resume
 * on a different fingerprint would continue a conversation with an agent that did not start it.
 */
export function agentFingerprint(codeVersion: string): string {
  const material = JSON.stringify({
    codeVersion,
    system: RECONCILER.system,
    model: RECONCILER.model,
    tools: toolSpecs(),
    prices: PRICE_TABLE.version,
  });
  return createHash('sha256').update(material).digest('hex').slice(0, 16);
}
