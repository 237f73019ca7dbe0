import { Option } from 'commander';
/**
 * The options `run` and `resume` share (both start the local engine on a run), each defined
 * once. `resume` lists them in its own order and, where its help says "as for run", points at
 * `run`'s description (`brief`).
 */
type Brief = {
    readonly brief?: boolean;
};
export declare const engineOptions: {
    agent: () => Option;
    failRate: () => Option;
    seed: () => Option;
    approve: () => Option;
    ledger: (brief?: Brief) => Option;
    worldData: (brief?: Brief) => Option;
    json: () => Option;
    crashAt: (brief?: Brief) => Option;
    crashRate: (brief?: Brief) => Option;
    crashSeed: (brief?: Brief) => Option;
    maxRecoveries: () => Option;
    template: () => Option;
    wait: () => Option;
    prices: (brief?: Brief) => Option;
};
export {};
