import { Command } from 'commander';
/** The root command and what every command shares: its global options and where it writes. */
export declare const out: (line: string) => void;
export declare const err: (line: string) => void;
export declare const printJson: (value: unknown) => void;
export declare const program: Command;
export declare const stateDir: () => string;
export declare const deployed: () => {
    stack?: string;
    region?: string;
};
export declare const AGENT_HELP = "the agent: a name (agents/<name>/agent.ts) or the path of its module (default: $SAVEPOINT_AGENT)";
export declare const defaultAgent: string | undefined;
