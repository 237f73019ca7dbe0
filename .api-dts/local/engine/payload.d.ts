export declare function containsString(value: unknown, needle: string): boolean;
