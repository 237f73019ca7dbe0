/** Whether `value` is a plain object (a JSON object): not null, not an array. */
export declare function isRecord(value: unknown): value is Record<string, unknown>;
