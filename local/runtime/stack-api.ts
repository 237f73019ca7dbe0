/**
 * A stack's one API (infra/stack-api.ts; lambdas/adapters/stack-api.ts on AWS) in the twin, over
 * several agents' local stacks of one deployed template (each started with the template, the first's
 * ledger and IAM: options.ts `sharedLedger`, `sharedIam`): the runs routes and the approval
 * callback answer for every agent, each request served by its agent's deps — its functions' roles
 * are the stack's shared RunsApi, ApprovalCallback and RunEvents functions' — behind API Gateway's
 * checks from the template (local/aws/iam/api-gateway.ts: the resource policy, the methods'
 * authorization, and the Lambda permissions that let API Gateway invoke each function).
 */
import { stackApprovalApiHandler } from '../../lambdas/adapters/approval-http.js';
import { runsRoutesHandler } from '../../lambdas/adapters/runs-http.js';
import { createStackRunsRoutes } from '../../lambdas/runs/stack-routes.js';
import { localApiAuthorizer } from '../aws/iam/api-gateway.js';
import { startApprovalApi } from '../services/approval-api.js';
import type { CfnTemplateJson } from '../template/asl.js';
import type { LocalStack } from './local-stack.js';

/**
 * Serves `stacks` (one per agent) as their stack's one API, on loopback, as this machine's user.
 * `template`: what API Gateway is deployed from. @default the first stack's
 */
export async function startStackApi(stacks: readonly LocalStack<any>[], options: { template?: CfnTemplateJson } = {}) {
  const [first] = stacks;
  if (!first) throw new Error('a stack API serves at least one agent');
  const runs = runsRoutesHandler(createStackRunsRoutes(new Map(stacks.map((stack) => [stack.agent.name, stack.served.runs])), first.served.runs.ledger));
  const approvals = stackApprovalApiHandler(new Map(stacks.map((stack) => [stack.agent.name, stack.served.approvals])), first.served.approvals.ledger);
  const authorize = localApiAuthorizer(options.template ?? first.template);
  // The RunEvents function reads any agent's run of the ledger as its one role: the first stack's route serves them all.
  const api = await startApprovalApi(approvals, { runs, runEvents: first.served.runEvents, ...(authorize && { authorize }) });
  return { ...api, runs, approvals };
}
