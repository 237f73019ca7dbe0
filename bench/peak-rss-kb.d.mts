/** This process's peak RSS in KB (peak-rss-kb.mjs). */
export declare function peakRssKb(): number;
