import * as z from 'zod';
import type { Message } from '../lambdas/records/messages.js';
/**
 * Reading a conversation the way a scripted model policy (`AgentDefinition.dev.policy`) does: the
 * tool calls it made and what came back. A policy keeps no memory — every decision is recomputed
 * from the request — so these are pure functions of the messages.
 */
export interface RecordedCall {
    id: string;
    name: string;
    input: Record<string, unknown>;
    /** Missing when the conversation holds no tool_result for the call. */
    result?: {
        content: string;
        isError: boolean;
    };
}
export type ResultRead<T> = {
    ok: true;
    value: T;
} | {
    ok: false;
    problem: string;
};
/** Every tool call of the conversation, in order, each with its result when there is one. */
export declare function readCalls(messages: readonly Message[]): RecordedCall[];
/** Reads a tool result as JSON of the given shape, or says what is wrong with it. */
export declare function readResult<S extends z.ZodType>(call: RecordedCall, schema: S): ResultRead<z.output<S>>;
/** `{"error":"approval_rejected","reason":"…"}` → `approval_rejected: …`; anything else is quoted. */
export declare function describeToolError(content: string): string;
/** Text in quotes, clipped to 200 characters. */
export declare function quote(text: string): string;
