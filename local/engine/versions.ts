/**
 * The engine's published versions and aliases, as a state machine with published versions holds
 * them (local/aws/state-machine-versions.ts has AWS's rules for them): each version is a
 * definition, interpreted, with the Task handlers of its code; a new execution starts on the
 * newest (or the version it names, or its alias routes to); a live one runs on its own to its end.
 */
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { assertNoAliasRoutesTo } from '../aws/state-machine-versions.js';
import type { AslDefinition } from '../template/asl.js';
import { assertSupported, clampTimers, liftTaskTimeouts, rootResultPaths } from './definition.js';
import { withItemReaders } from '../aws/sfn-item-reader.js';
import { withChildStarts, withFailureTolerance } from '../aws/sfn-distributed-map.js';
import { LocalSfnError } from './errors.js';
import { taskSpecs, type TaskBinding, type TaskSpec } from './lambda-task.js';

/** Definitions (as JSON) that already passed the library's validation in this process. */
const validated = new Set<string>();

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
  validated?: { has(text: string): boolean; add(text: string): void };
}

export class StateMachineVersions {
  /** Version 1, then each `publish`: new executions start on the last. */
  private readonly versions: Version[] = [];
  /** Alias name → the version number it routes to. */
  private readonly aliases = new Map<string, number>();
  private readonly stateMachineArn: string;
  private readonly taskTimeoutOverrides: Record<string, number>;
  private readonly now: () => Date;
  private readonly validated: NonNullable<VersionsOptions['validated']>;
  private readonly createdAt: Date;

  constructor(opts: VersionsOptions) {
    this.stateMachineArn = opts.stateMachineArn;
    for (const alias of opts.aliases) this.aliases.set(alias, 1);
    this.taskTimeoutOverrides = opts.taskTimeoutOverrides;
    this.now = opts.now;
    this.validated = opts.validated ?? validated;
    this.createdAt = opts.createdAt;
  }

  /** The newest version: what a new execution runs. */
  get latest(): Version {
    return this.versions.at(-1)!;
  }

  /** How many versions were published (deleted ones included). */
  get count(): number {
    return this.versions.length;
  }

  /** Publishes a version and routes every alias to it; returns its number. */
  publish(version: VersionSource): number {
    assertSupported(version.definition);
    // The engine times each Task itself, on its clock (engine/lambda-task.ts): the interpreter's copy
    // has its Task timeouts lifted, and the specs carry the definition's (or a test's, in ms).
    // An ItemReader is read by a Task of the engine's own before its Map (local/aws/sfn-item-reader.ts);
    // a distributed Map's child starts by one at the head of its child states (local/aws/sfn-distributed-map.ts).
    // A ResultPath of `$` is left to the library's default, which is what it means (engine/definition.ts).
    const interpreted = rootResultPaths(liftTaskTimeouts(clampTimers(withChildStarts(withFailureTolerance(withItemReaders(version.definition))))));
    // The library validates with asl-validator (~150 ms a time); once per distinct definition is enough.
    const text = JSON.stringify(interpreted);
    const machine = new StateMachine(interpreted as unknown as StateMachineDefinition, { validationOptions: { noValidate: this.validated.has(text) } });
    this.validated.add(text);
    const specs = taskSpecs(clampTimers(version.definition, this.taskTimeoutOverrides), version.tasks);
    const number = this.versions.length + 1;
    this.versions.push({ number, definition: version.definition, machine, specs, creationDate: this.now(), ...(version.description !== undefined && { description: version.description }) });
    for (const alias of this.aliases.keys()) this.aliases.set(alias, number);
    return number;
  }

  /** ListStateMachineVersions: the versions not deleted, newest first (as the service lists them). */
  list(): { stateMachineVersionArn: string; creationDate: Date }[] {
    return this.versions
      .filter((version) => !version.deleted)
      .reverse()
      .map((version) => ({ stateMachineVersionArn: this.arnOf(version), creationDate: version.creationDate }));
  }

  /** ListStateMachineAliases and DescribeStateMachineAlias: each alias and the version it routes all traffic to. */
  listAliases(): { name: string; stateMachineAliasArn: string; stateMachineVersionArn: string; creationDate: Date }[] {
    return [...this.aliases].map(([name, number]) => ({ name, stateMachineAliasArn: `${this.stateMachineArn}:${name}`, stateMachineVersionArn: `${this.stateMachineArn}:${number}`, creationDate: this.createdAt }));
  }

  /** DescribeStateMachine on a version's ARN: that version (StateMachineDoesNotExist for one deleted or never published). */
  described(number: number): Version {
    const version = this.versions[number - 1];
    if (!version || version.deleted) throw new LocalSfnError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${this.stateMachineArn}:${number}'`);
    return version;
  }

  /** DeleteStateMachineVersion, by AWS's rules (local/aws/state-machine-versions.ts). Deleting a version that is not there changes nothing. */
  delete(number: number): void {
    const version = this.versions[number - 1];
    if (!version || version.deleted) return;
    assertNoAliasRoutesTo([...this.aliases].filter(([, routed]) => routed === number).map(([name]) => `${this.stateMachineArn}:${name}`));
    version.deleted = true;
  }

  /**
   * The version a start runs: `version` (StartExecution with a version ARN), the one `alias` routes
   * to (with an alias ARN: the execution is associated with both, as AWS associates it), or the
   * newest; and the ARNs the execution is associated with.
   */
  forStart(req: { version?: number; alias?: string }): { version: Version; qualified: { versionArn?: string; aliasArn?: string } } {
    const aliased = req.alias === undefined ? undefined : this.aliases.get(req.alias);
    if (req.alias !== undefined && aliased === undefined) throw new LocalSfnError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${this.stateMachineArn}:${req.alias}'`);
    const wanted = aliased ?? req.version;
    const version = wanted === undefined ? this.latest : this.versions[wanted - 1];
    if (!version || version.deleted) throw new LocalSfnError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${this.stateMachineArn}:${req.version}'`);
    const qualified = {
      ...(wanted !== undefined && { versionArn: this.arnOf(version) }),
      ...(req.alias !== undefined && { aliasArn: `${this.stateMachineArn}:${req.alias}` }),
    };
    return { version, qualified };
  }

  /** A version's ARN: the state machine's, qualified by its number. */
  arnOf(version: Pick<Version, 'number'>): string {
    return `${this.stateMachineArn}:${version.number}`;
  }
}
