import { type AgentDefinition } from '../define.js';
import type { RequestShape } from '../records/ledger-records.js';
/**
 * What every model request of a run sends besides its conversation, as digests: the system prompt
 * and each tool's spec (name, description, schema, effect). StartRun records it on the run, so that
 * a replay on other code can say which of them changed (`the system prompt changed`) where the
 * run's fingerprint could only say that something did. Digests, not the text: a run record stays
 * small, and what a replay needs is equality.
 */
export type { RequestShape };
export declare function requestShape(agent: Pick<AgentDefinition, 'system' | 'tools'>): RequestShape;
/** What differs between a recorded shape and this code's, in words; empty when nothing does. */
export declare function shapeChanges(recorded: RequestShape, current: RequestShape): string[];
