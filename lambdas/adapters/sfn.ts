import {
  DeleteStateMachineVersionCommand,
  DescribeExecutionCommand,
  DescribeStateMachineAliasCommand,
  DescribeStateMachineCommand,
  ListExecutionsCommand,
  ListStateMachineAliasesCommand,
  ListStateMachineVersionsCommand,
  SendTaskFailureCommand,
  SendTaskSuccessCommand,
  StartExecutionCommand,
  StopExecutionCommand,
  type SFNClient,
} from '@aws-sdk/client-sfn';
import type { Executions, TaskCallbacks } from '../shared/ports.js';
import type { ExecutionStarter } from '../steps/recover-run.js';
import type { ExecutionLookup } from '../steps/sweep.js';
import type { StateMachineVersions } from '../steps/prune-versions.js';
import { unqualifiedArn } from '../runs/versions.js';
import type { BatchExecutionInput, BatchStore } from '../runs/batch.js';

/** Step Functions answers these when nobody waits on a token any more; the decision stays recorded. */
const GONE = new Set(['TaskDoesNotExist', 'TaskTimedOut', 'InvalidToken']);

export function sfnTaskCallbacks(client: SFNClient): TaskCallbacks {
  const send = async (command: SendTaskSuccessCommand | SendTaskFailureCommand): Promise<boolean> => {
    try {
      await client.send(command as SendTaskSuccessCommand);
      return true;
    } catch (error) {
      if (error instanceof Error && GONE.has(error.name)) return false;
      throw error;
    }
  };
  return {
    succeed: (taskToken, output) => send(new SendTaskSuccessCommand({ taskToken, output: JSON.stringify(output) })),
    // Step Functions limits `error` to 256 and `cause` to 32768 characters.
    fail: (taskToken, error, cause) =>
      send(new SendTaskFailureCommand({ taskToken, error: error.slice(0, 256), cause: cause.slice(0, 32_768) })),
  };
}

export function sfnExecutions(client: SFNClient): Executions {
  return {
    isRunning: async (executionArn) => {
      try {
        const execution = await client.send(new DescribeExecutionCommand({ executionArn }));
        return execution.status === 'RUNNING';
      } catch (error) {
        if (error instanceof Error && error.name === 'ExecutionDoesNotExist') return false;
        throw error;
      }
    },
    stop: async (executionArn, error, cause) => {
      try {
        await client.send(new StopExecutionCommand({ executionArn, error: error.slice(0, 256), cause: cause.slice(0, 32_768) }));
      } catch (failure) {
        // Already gone: nothing left to stop.
        if (!(failure instanceof Error && failure.name === 'ExecutionDoesNotExist')) throw failure;
      }
    },
  };
}

/**
 * `StartExecution` by name: a name is used once per state machine, so starting the same name again
 * (a retried recovery) finds the execution it started the first time instead of a second one.
 */
export function sfnStarter(client: SFNClient, stateMachineArn: string): ExecutionStarter {
  return {
    start: async (name, input, options = {}) => {
      try {
        const on = options.on ?? (options.sameVersionAs === undefined ? stateMachineArn : await versionOf(client, options.sameVersionAs, stateMachineArn));
        const started = await client.send(new StartExecutionCommand({ stateMachineArn: on, name, input }));
        return { executionArn: started.executionArn! };
      } catch (error) {
        if (error instanceof Error && error.name === 'ExecutionAlreadyExists') {
          return { executionArn: executionArnOf(stateMachineArn, name) };
        }
        throw error;
      }
    },
  };
}

/**
 * Batches as executions of the stack's batch state machine (infra/batch-state-machine.ts), each
 * named by its batch id. A start of a name that exists answers that batch (its input as it was
 * started): each start's input differs (its `createdAt`), so Step Functions refuses it with
 * ExecutionAlreadyExists rather than answering the running execution as a repeat.
 */
export function sfnBatches(client: SFNClient, stateMachineArn: string): BatchStore {
  const get: BatchStore['get'] = async (batchId) => {
    try {
      const described = await client.send(new DescribeExecutionCommand({ executionArn: executionArnOf(stateMachineArn, batchId) }));
      return {
        batch: JSON.parse(described.input ?? 'null') as BatchExecutionInput,
        status: described.status ?? 'RUNNING',
        // Why it ended without succeeding (the runs API answers them only then).
        ...(described.error !== undefined && { error: described.error }),
        ...(described.cause !== undefined && { cause: described.cause }),
      };
    } catch (error) {
      if (error instanceof Error && error.name === 'ExecutionDoesNotExist') return undefined;
      throw error;
    }
  };
  return {
    start: async (batch) => {
      try {
        await client.send(new StartExecutionCommand({ stateMachineArn, name: batch.batchId, input: JSON.stringify(batch) }));
        return { created: true, batch, status: 'RUNNING' };
      } catch (error) {
        const found = error instanceof Error && error.name === 'ExecutionAlreadyExists' ? await get(batch.batchId) : undefined;
        if (found) return { created: false, ...found };
        throw error;
      }
    },
    get,
  };
}

/** The version an execution runs (`stateMachineVersionArn`), or `fallback` for one started unversioned or gone. */
export async function versionOf(client: SFNClient, executionArn: string, fallback: string): Promise<string> {
  try {
    return (await client.send(new DescribeExecutionCommand({ executionArn }))).stateMachineVersionArn ?? fallback;
  } catch (error) {
    if (error instanceof Error && error.name === 'ExecutionDoesNotExist') return fallback;
    throw error;
  }
}

/** `DescribeExecution` for the sweeper: how an execution stands, or `undefined` when it does not exist. */
export function sfnLookup(client: SFNClient): ExecutionLookup {
  return {
    describe: async (executionArn) => {
      try {
        const execution = await client.send(new DescribeExecutionCommand({ executionArn }));
        return {
          status: execution.status ?? 'RUNNING',
          ...(execution.stopDate ? { stopDate: execution.stopDate.toISOString() } : {}),
          ...(execution.error ? { error: execution.error } : {}),
          ...(execution.cause ? { cause: execution.cause } : {}),
        };
      } catch (error) {
        if (error instanceof Error && error.name === 'ExecutionDoesNotExist') return undefined;
        throw error;
      }
    },
  };
}

/**
 * The ARN of execution `name` of a state machine, its alias or its version: executions are named
 * under the state machine itself (`…:execution:<machine>:<name>`), whatever they were started on.
 */
export function executionArnOf(stateMachineArn: string, name: string): string {
  const [arn, partition, service, region, account, , machine] = stateMachineArn.split(':');
  return [arn, partition, service, region, account, 'execution', machine, name].join(':');
}

/** The state machine an execution belongs to (its ARN without the execution's name). */
export function stateMachineArnOf(executionArn: string): string {
  const [arn, partition, service, region, account, , machine] = executionArn.split(':');
  return [arn, partition, service, region, account, 'stateMachine', machine].join(':');
}

/**
 * The state machine's versions through the Step Functions API (lambdas/steps/prune-versions.ts):
 * every page of ListStateMachineVersions and ListStateMachineAliases, each alias's routing,
 * ListExecutions on a version's ARN, DeleteStateMachineVersion (ConflictException: an alias
 * references the version), and DescribeStateMachine on a version's ARN, which answers that
 * version's definition (StateMachineDoesNotExist: it was deleted).
 */
export function sfnVersions(client: SFNClient, stateMachineArn: string): StateMachineVersions {
  const machine = unqualifiedArn(stateMachineArn);
  const pages = async <T>(page: (nextToken: string | undefined) => Promise<{ items: T[]; nextToken?: string }>): Promise<T[]> => {
    const all: T[] = [];
    let nextToken: string | undefined;
    do {
      const answer = await page(nextToken);
      all.push(...answer.items);
      nextToken = answer.nextToken;
    } while (nextToken);
    return all;
  };
  return {
    list: async () => {
      const versions = await pages(async (nextToken) => {
        const answer = await client.send(new ListStateMachineVersionsCommand({ stateMachineArn: machine, ...(nextToken && { nextToken }) }));
        return { items: answer.stateMachineVersions ?? [], ...(answer.nextToken && { nextToken: answer.nextToken }) };
      });
      return versions.map(({ stateMachineVersionArn }) => ({ arn: stateMachineVersionArn!, number: Number(stateMachineVersionArn!.split(':').pop()) }));
    },
    aliased: async () => {
      const aliases = await pages(async (nextToken) => {
        const answer = await client.send(new ListStateMachineAliasesCommand({ stateMachineArn: machine, ...(nextToken && { nextToken }) }));
        return { items: answer.stateMachineAliases ?? [], ...(answer.nextToken && { nextToken: answer.nextToken }) };
      });
      const routed = new Set<string>();
      for (const { stateMachineAliasArn } of aliases) {
        const alias = await client.send(new DescribeStateMachineAliasCommand({ stateMachineAliasArn }));
        for (const route of alias.routingConfiguration ?? []) routed.add(route.stateMachineVersionArn!);
      }
      return routed;
    },
    activity: async (versionArn) => {
      const running = await client.send(new ListExecutionsCommand({ stateMachineArn: versionArn, statusFilter: 'RUNNING', maxResults: 1 }));
      const newest = await client.send(new ListExecutionsCommand({ stateMachineArn: versionArn, maxResults: 1 }));
      const lastEnded = newest.executions?.[0]?.stopDate;
      return { running: (running.executions?.length ?? 0) > 0, ...(lastEnded && { lastEnded }) };
    },
    delete: async (versionArn) => {
      try {
        await client.send(new DeleteStateMachineVersionCommand({ stateMachineVersionArn: versionArn }));
        return true;
      } catch (error) {
        if (error instanceof Error && error.name === 'ConflictException') return false;
        throw error;
      }
    },
    definition: async (versionArn) => {
      try {
        return (await client.send(new DescribeStateMachineCommand({ stateMachineArn: versionArn }))).definition;
      } catch (error) {
        if (error instanceof Error && error.name === 'StateMachineDoesNotExist') return undefined;
        throw error;
      }
    },
  };
}
