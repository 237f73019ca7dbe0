/**
 * The engine's published versions and aliases, as a state machine with published versions holds
 * them (local/aws/state-machine-versions.ts has AWS's rules for them): each version is a
 * definition, interpreted, with the Task handlers of its code; a new execution starts on the
 * newest (or the version it names, or its alias routes to); a live one runs on its own to its end.
 */
import { StateMachine } from 'aws-local-stepfunctions';
import type { AslDefinition } from '../template/asl.js';
import { type TaskBinding, type TaskSpec } from './lambda-task.js';
/** One published version: its definition, interpreted, and the Task handlers of its code. */
export interface Version {
    number: number;
    definition: AslDefinition;
    machine: StateMachine;
    specs: Map<string, TaskSpec>;
    description?: string;
    creationDate: Date;
    /** DeleteStateMachineVersion: nothing starts on it again; its executions in progress run on. */
    deleted?: true;
}
/** What a version is published from. */
export interface VersionSource {
    definition: AslDefinition;
    tasks: Record<string, TaskBinding>;
    description?: string;
}
export interface VersionsOptions {
    stateMachineArn: string;
    /** Alias names, each routed to the newest version. */
    aliases: readonly string[];
    /** Per Task state name, ms instead of its TimeoutSeconds. */
    taskTimeoutOverrides: Record<string, number>;
    now: () => Date;
    /** When the state machine was created: its aliases' creation date. */
    createdAt: Date;
    /** Definitions (as JSON) known to pass the library's validation. @default this process's memory */
    validated?: {
        has(text: string): boolean;
        add(text: string): void;
    };
}
export declare class StateMachineVersions {
    /** Version 1, then each `publish`: new executions start on the last. */
    private readonly versions;
    /** Alias name → the version number it routes to. */
    private readonly aliases;
    private readonly stateMachineArn;
    private readonly taskTimeoutOverrides;
    private readonly now;
    private readonly validated;
    private readonly createdAt;
    constructor(opts: VersionsOptions);
    /** The newest version: what a new execution runs. */
    get latest(): Version;
    /** How many versions were published (deleted ones included). */
    get count(): number;
    /** Publishes a version and routes every alias to it; returns its number. */
    publish(version: VersionSource): number;
    /** ListStateMachineVersions: the versions not deleted, newest first (as the service lists them). */
    list(): {
        stateMachineVersionArn: string;
        creationDate: Date;
    }[];
    /** ListStateMachineAliases and DescribeStateMachineAlias: each alias and the version it routes all traffic to. */
    listAliases(): {
        name: string;
        stateMachineAliasArn: string;
        stateMachineVersionArn: string;
        creationDate: Date;
    }[];
    /** DeleteStateMachineVersion, by AWS's rules (local/aws/state-machine-versions.ts). Deleting a version that is not there changes nothing. */
    delete(number: number): void;
    /**
     * The version a start runs: `version` (StartExecution with a version ARN), the one `alias` routes
     * to (with an alias ARN: the execution is associated with both, as AWS associates it), or the
     * newest; and the ARNs the execution is associated with.
     */
    forStart(req: {
        version?: number;
        alias?: string;
    }): {
        version: Version;
        qualified: {
            versionArn?: string;
            aliasArn?: string;
        };
    };
    /** A version's ARN: the state machine's, qualified by its number. */
    arnOf(version: Pick<Version, 'number'>): string;
}
