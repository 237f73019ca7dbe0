import { type SFNClient } from '@aws-sdk/client-sfn';
import type { Executions, TaskCallbacks } from '../shared/ports.js';
import type { ExecutionStarter } from '../steps/recover-run.js';
import type { ExecutionLookup } from '../steps/sweep.js';
import type { StateMachineVersions } from '../steps/prune-versions.js';
export declare function sfnTaskCallbacks(client: SFNClient): TaskCallbacks;
export declare function sfnExecutions(client: SFNClient): Executions;
/**
 * `StartExecution` by name: a name is used once per state machine, so starting the same name again
 * (a retried recovery) finds the execution it started the first time instead of a second one.
 */
export declare function sfnStarter(client: SFNClient, stateMachineArn: string): ExecutionStarter;
/** The version an execution runs (`stateMachineVersionArn`), or `fallback` for one started unversioned or gone. */
export declare function versionOf(client: SFNClient, executionArn: string, fallback: string): Promise<string>;
/** `DescribeExecution` for the sweeper: how an execution stands, or `undefined` when it does not exist. */
export declare function sfnLookup(client: SFNClient): ExecutionLookup;
/**
 * The ARN of execution `name` of a state machine, its alias or its version: executions are named
 * under the state machine itself (`…:execution:<machine>:<name>`), whatever they were started on.
 */
export declare function executionArnOf(stateMachineArn: string, name: string): string;
/** The state machine an execution belongs to (its ARN without the execution's name). */
export declare function stateMachineArnOf(executionArn: string): string;
/**
 * The state machine's versions through the Step Functions API (lambdas/steps/prune-versions.ts):
 * every page of ListStateMachineVersions and ListStateMachineAliases, each alias's routing,
 * ListExecutions on a version's ARN, and DeleteStateMachineVersion (ConflictException: an alias
 * references the version).
 */
export declare function sfnVersions(client: SFNClient, stateMachineArn: string): StateMachineVersions;
