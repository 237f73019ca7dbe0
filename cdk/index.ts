/**
 * savepoint's CDK constructs: deploy an agent as a durable Step Functions state machine.
 *
 * ```sh
 * npm install savepoint zod
 * npm install -D aws-cdk-lib constructs aws-cdk esbuild
 * ```
 *
 * `aws-cdk-lib` and `constructs` are optional peer dependencies: only an app that deploys needs
 * them. `esbuild` bundles each step's function, locally, with code splitting (a synth that bundles
 * fails without it, naming it; there is no Docker fallback).
 *
 * @example
 * ```ts
 * import { App } from 'aws-cdk-lib';
 * import { SavepointStack } from 'savepoint/cdk';
 *
 * const app = new App();
 * const stack = new SavepointStack(app, 'Agents');
 * stack.addAgent('InboxNotes', { agentName: 'inbox-notes', entry: './my-agent.ts' });
 * ```
 * @module
 */
export { DurableAgent, outputDescription, type AgentBatchesProps, type AgentOutput, type ApprovalPageProps, type DurableAgentProps } from '../infra/durable-agent.js';
export { BatchStateMachine, type BatchStateMachineProps } from '../infra/batch-state-machine.js';
export { SavepointStack, type SavepointStackProps } from '../infra/stack.js';
// The types the props above name.
export { LedgerTable } from '../infra/ledger-table.js';
export type { ApprovalSettings } from '../infra/approvals.js';
export type { AlarmThresholds } from '../infra/observability.js';
export type { FleetBudgetProps } from '../infra/fleet-budget.js';
export type { ModelAccessProps } from '../infra/model-access.js';
export type { StepName } from '../lambdas/shared/steps.js';
