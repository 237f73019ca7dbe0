import type { AgentDefinition } from '../define.js';
import { Steps } from '../shared/steps.js';
import { lazyStep, stepContext, type AgentSteps, type HarnessDeps, type StepWiring } from './steps/context.js';
import { wireStartRun } from './steps/start-run.js';
import { wireBudgetCheck } from './steps/budget-check.js';
import { wireCallModel } from './steps/call-model.js';
import { wireRequestApproval } from './steps/request-approval.js';
import { wireCallTool } from './steps/call-tool.js';
import { wireFinalize } from './steps/finalize.js';
import { wireExpireApprovals } from './steps/expire-approvals.js';
import { wireExecutionStopped } from './steps/execution-stopped.js';
import { wireRecoverRun } from './steps/recover-run.js';
import { wireSweep } from './steps/sweep.js';
import { wireCompact } from './steps/compact.js';
import { wireHandoff } from './steps/handoff.js';
import { wirePruneVersions } from './steps/prune-versions.js';

export type { AgentSteps, ApprovalSetup, HarnessDeps, StepFn } from './steps/context.js';

/**
 * The steps of one agent, wired once for both engines. Each step is built on its first call:
 * its dependencies are read then, not before.
 */
export function createSteps(defined: AgentDefinition, deps: HarnessDeps): AgentSteps {
  const context = stepContext(defined, deps);
  const wired = (wire: StepWiring) => lazyStep(() => wire(context));
  return {
    [Steps.StartRun]: wired(wireStartRun),
    [Steps.BudgetCheck]: wired(wireBudgetCheck),
    [Steps.CallModel]: wired(wireCallModel),
    [Steps.RequestApproval]: wired(wireRequestApproval),
    [Steps.CallTool]: wired(wireCallTool),
    [Steps.Finalize]: wired(wireFinalize),
    [Steps.ExpireApprovals]: wired(wireExpireApprovals),
    [Steps.ExecutionStopped]: wired(wireExecutionStopped),
    [Steps.RecoverRun]: wired(wireRecoverRun),
    [Steps.Sweep]: wired(wireSweep),
    [Steps.Compact]: wired(wireCompact),
    [Steps.Handoff]: wired(wireHandoff),
    [Steps.PruneVersions]: wired(wirePruneVersions),
  };
}

