import { type AslDefinition } from '../template/asl.js';
export declare function assertSupported(definition: AslDefinition): void;
/**
 * A copy of the definition the library can time (and run) faithfully: a Task without TimeoutSeconds waits as
 * long as Node allows (the library would default to 60 s; the service to 99999999 s), and every
 * seconds field is clamped so setTimeout cannot overflow into a 1 ms timer. A Task named in
 * `taskTimeoutMs` times out after that many ms instead (tests).
 */
export declare function clampTimers(definition: AslDefinition, taskTimeoutMs?: Record<string, number>): AslDefinition;
/**
 * The copy the interpreter runs: every Task's TimeoutSeconds lifted to the longest timer Node arms,
 * so that the engine's own timer (engine/lambda-task.ts, on the engine's clock) is what times a Task
 * out, never the library's real setTimeout. A TimeoutSecondsPath (read from the state's input) is
 * left to the library.
 */
export declare function liftTaskTimeouts(definition: AslDefinition): AslDefinition;
