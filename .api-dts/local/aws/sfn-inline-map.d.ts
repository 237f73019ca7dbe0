/** The iterations a Map of `maxConcurrency` runs at once, at most. */
export declare function inlineMapConcurrency(maxConcurrency: number): number;
