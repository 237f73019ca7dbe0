import type { Command } from 'commander';
import { type ReplayResult } from '../../local/replay/index.js';
/** `savepoint replay <runId>`: re-executes a finished run on this code from its ledger, with no live call. */
export declare function registerReplayCommand(program: Command): void;
export declare function formatReplay(result: ReplayResult): string;
