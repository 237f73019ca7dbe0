import { SFNClient } from '@aws-sdk/client-sfn';
import type { BatchStore } from '../runs/batch.js';
import type { Executions, TaskCallbacks } from '../shared/ports.js';
import type { ExecutionStarter } from '../steps/recover-run.js';
import type { ExecutionLookup } from '../steps/sweep.js';
import type { StateMachineVersions } from '../steps/prune-versions.js';
import { sfnBatches, sfnExecutions, sfnLookup, sfnStarter, sfnTaskCallbacks, sfnVersions } from './sfn.js';

// Step Functions' clients (adapters/aws-clients.ts `AwsClients.stepFunctions`), in a module of their
// own: CallTool loads this one on first use (`stepFunctionsOnFirstCall`), and a bundle that imports
// a module importing the SDK statically, even unused, loads the SDK at its cold start (esbuild keeps
// the import of a chunk the lazy import shares).

/** What the steps ask of Step Functions (adapters/sfn.ts). */
export interface StepFunctionsPorts {
  readonly callbacks: TaskCallbacks;
  readonly executions: Executions;
  readonly lookup: ExecutionLookup;
  readonly starter: (stateMachineArn: string) => ExecutionStarter;
  /** The state machine's versions (the version pruner). */
  readonly versions: (stateMachineArn: string) => StateMachineVersions;
  /** The stack's batches (the runs API's `/v1/batches`): executions of its batch state machine. */
  readonly batches: (stateMachineArn: string) => BatchStore;
}

/** Every Step Functions port over one client. */
function sfnPorts(client: SFNClient): StepFunctionsPorts {
  return { callbacks: sfnTaskCallbacks(client), executions: sfnExecutions(client), lookup: sfnLookup(client), starter: (arn) => sfnStarter(client, arn), versions: (arn) => sfnVersions(client, arn), batches: (arn) => sfnBatches(client, arn) };
}

/** Step Functions (StartRun, BudgetCheck, the approval functions, recovery, the sweeper, Handoff, ExecutionStopped). */
export const stepFunctions = {
  stepFunctions: (traced: <T>(client: T) => T): StepFunctionsPorts => sfnPorts(traced(new SFNClient({}))),
};

