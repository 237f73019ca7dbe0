/**
 * The calls a function makes to Secrets Manager, KMS, EventBridge and SNS, where local code stands
 * in for those services, authorized as that function's role against the template's policies (the
 * same evaluator as every other call: policy.ts). Each is checked on the resource the function's
 * environment names in the template (roles.ts SERVICE_VARIABLES), as the AWS adapters
 * (lambdas/adapters/aws-approvals.ts, aws-deps.ts) call it, with the action and resource the
 * Service Authorization Reference names for the call
 * (https://docs.aws.amazon.com/service-authorization/latest/reference/reference_policies_actions-resources-contextkeys.html):
 *
 *   the ledger's seal key    secretsmanager:GetSecretValue  LEDGER_SEAL_SECRET_ARN    the function's first ledger call (dynamodb.ts), as DynamoDbLedger reads it once per container
 *   the approval-link key    secretsmanager:GetSecretValue  APPROVAL_LINK_SECRET_ARN  each link signed or verified (AWS reads its versions every few minutes)
 *   a decision's MAC         kms:GenerateMac / kms:VerifyMac DECISION_KEY_ID          each decision signed (the callback) or verified (CallTool, BudgetCheck, CallModel)
 *   a tool's credential      secretsmanager:GetSecretValue  TOOL_SECRETS (name → ARN)  each read of a secret toolSecrets does not keep (lambdas/tools/secrets.ts)
 *   telling the approvers    events:PutEvents               the APPROVAL_EVENT_BUS bus the request's event (no link)
 *                            sns:Publish                    APPROVAL_TOPIC_ARN         each approver's message (their link)
 *
 * A function whose environment names no such resource makes no such call on AWS (it has no link
 * signer, no decision key, no notifier there): locally it has no decision or starter key either,
 * its link signer's stand-in is used unchecked, and the notifier is not called. A refused call throws AccessDeniedException, as the SDK would.
 */
import type { ApprovalLinks } from '../../../lambdas/approvals/decision.js';
import type { DecisionMac } from '../../../lambdas/approvals/decision-mac.js';
import { notificationRequests, type ApprovalNotifier } from '../../../lambdas/approvals/notify.js';
import type { ApprovalSetup } from '../../../lambdas/wiring/create-steps.js';
import type { LocalEventBus } from '../event-bus.js';
import { toolSecrets, type ToolSecrets } from '../../../lambdas/tools/secrets.js';
import type { Clock } from '../../../lambdas/shared/ports.js';
import { DeleteFunctionCommand, ListVersionsByFunctionCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { checkPublish, checkPutEvents } from '../notification-requests.js';
import { LOCAL_ACCOUNT, LOCAL_REGION } from './deployment.js';
import { AccessDeniedError } from './authorizer.js';
import type { TwinIam } from './index.js';
import type { ServiceVariables } from './roles.js';

/** The HMAC keys of the setup (KMS on AWS), each with the variable that names its key to a function. */
const MAC_KEYS = { decisionMac: 'DECISION_KEY_ID', starterMac: 'STARTER_KEY_ID' } as const satisfies Partial<Record<keyof ApprovalSetup, keyof ServiceVariables>>;

/** Whether a function's environment names `variable` (a step with no function in the template is not judged: true). */
function hasVariable(services: ServiceVariables | undefined, variable: keyof ServiceVariables): boolean {
  return services === undefined || services[variable] !== undefined;
}

/** The ARN of the event bus APPROVAL_EVENT_BUS names (`default`, a bus name, or an ARN). */
export function eventBusArn(bus: string): string {
  return bus.startsWith('arn:') ? bus : `arn:aws:events:${LOCAL_REGION}:${LOCAL_ACCOUNT}:event-bus/${bus}`;
}

/**
 * The local approval machinery as `step`'s function uses it: each call it would make to AWS
 * authorized as its role. Events EventBridge would accept on the default bus go on `defaultBus`
 * (as the twin keeps it), when there is one.
 */
export function approvalsAs(step: string, setup: ApprovalSetup, iam: Pick<TwinIam, 'authorizeAs' | 'servicesOf'>, defaultBus?: LocalEventBus): ApprovalSetup {
  const services = (): ServiceVariables => iam.servicesOf(step) ?? {};
  const authorize = (action: string, resource: string | undefined) => {
    if (resource !== undefined) iam.authorizeAs(step, { action, resource });
  };
  // SNS words its refusal otherwise: error code AuthorizationError, HTTP 403
  // (https://docs.aws.amazon.com/sns/latest/api/API_Publish.html#API_Publish_Errors), which the
  // SDK throws as AuthorizationErrorException.
  const authorizeSns = (action: string, resource: string | undefined) => {
    try {
      authorize(action, resource);
    } catch (error) {
      if (error instanceof AccessDeniedError) throw Object.assign(error, { name: 'AuthorizationErrorException' });
      throw error;
    }
  };
  const links: ApprovalLinks | undefined = setup.links && {
    get pageUrl() {
      return setup.links!.pageUrl;
    },
    approvers: setup.links.approvers,
    signer: {
      sign: async (claims) => {
        authorize('secretsmanager:GetSecretValue', services().APPROVAL_LINK_SECRET_ARN);
        return setup.links!.signer.sign(claims);
      },
      verify: async (token, expected, now) => {
        authorize('secretsmanager:GetSecretValue', services().APPROVAL_LINK_SECRET_ARN);
        return setup.links!.signer.verify(token, expected, now);
      },
    },
  };
  const macs = Object.fromEntries(
    Object.entries(MAC_KEYS).flatMap(([field, variable]): [string, DecisionMac | undefined][] => {
      const mac = setup[field as keyof typeof MAC_KEYS];
      // A function whose environment names no key has none on AWS (lambdas/adapters/aws-deps.ts sets
      // it only from the variable): it verifies nothing, so here it gets none either, and a missing
      // grant shows as the unverified decision it would be there, not as a check only the twin makes.
      if (!mac) return [];
      if (!hasVariable(iam.servicesOf(step), variable)) return [[field, undefined]];
      const wrapped: DecisionMac = {
        sign: async (message) => {
          authorize('kms:GenerateMac', services()[variable]);
          return mac.sign(message);
        },
        verify: async (message, given) => {
          authorize('kms:VerifyMac', services()[variable]);
          return mac.verify(message, given);
        },
      };
      return [[field, wrapped]];
    }),
  );
  // Locally the approvers are told by the CLI (`notify`); the notifier stands in for the calls AWS's
  // makes: the same requests, each authorized as the function's role, then held to the service's
  // request rules (a refused request throws as the SDK would; a failed entry fails as AWS's does).
  const notifier: ApprovalNotifier = {
    approvalRequested: async (request) => {
      const { APPROVAL_EVENT_BUS: bus, APPROVAL_TOPIC_ARN: topic } = services();
      if (bus === undefined) return;
      const requests = notificationRequests(request, { busName: bus, ...(topic !== undefined && { topicArn: topic }) });
      for (const entries of requests.putEvents) {
        authorize('events:PutEvents', eventBusArn(bus));
        const failed = checkPutEvents(entries);
        if (bus === 'default') defaultBus?.put(entries.filter((_, index) => !failed.some((entry) => entry.index === index)));
        if (failed.length > 0) throw new Error(`PutEvents failed: ${failed[0]!.errorCode}`);
      }
      for (const message of requests.publish) {
        authorizeSns('sns:Publish', topic);
        checkPublish(message);
      }
    },
  };
  return { ...setup, ...(links && { links }), ...macs, notifier };
}

/**
 * The tool credentials `values` (by name) as `step`'s function reads them: a read of a name the
 * template's TOOL_SECRETS binds is authorized as the function's role on that secret's ARN, as
 * GetSecretValue would be (a refusal throws AccessDeniedException); a name the template does not
 * bind (a local-only secret) is served unchecked. Kept as on AWS (lambdas/tools/secrets.ts).
 */
export function toolSecretsAs(step: string, values: Readonly<Record<string, string>>, clock: Clock, iam?: Pick<TwinIam, 'authorizeAs' | 'servicesOf'>): ToolSecrets {
  const bound = (): Record<string, string> => {
    const text = iam?.servicesOf(step)?.TOOL_SECRETS;
    return text === undefined ? {} : (JSON.parse(text) as Record<string, string>);
  };
  const read = async (name: string) => {
    const arn = bound()[name];
    if (arn !== undefined) iam!.authorizeAs(step, { action: 'secretsmanager:GetSecretValue', resource: arn });
    return values[name]!;
  };
  return toolSecrets(Object.fromEntries(Object.keys(values).map((name) => [name, name])), read, clock);
}

/**
 * The Lambda API as `step`'s function calls it (the version pruner's ListVersionsByFunction and
 * DeleteFunction: lambdas/adapters/lambda-versions.ts, which is handed this in place of its
 * LambdaClient): each call authorized as its role, with the function's tags as
 * `aws:ResourceTag/<key>` (Lambda's ABAC:
 * https://docs.aws.amazon.com/lambda/latest/dg/attribute-based-access-control.html), then held to
 * Lambda's rules (local/aws/lambda-versions.ts), a refusal thrown as the SDK throws it.
 * ListVersionsByFunction is authorized on the function's ARN, DeleteFunction with a Qualifier on the
 * version's (qualified) ARN — a grant on the unqualified ARN alone does not reach a version — and
 * ListVersionsByFunction answers at most 50 versions a page (its MaxItems default), then NextMarker.
 */
export function lambdaClientAs(step: string, iam: Pick<TwinIam, 'authorizeAs' | 'lambda'>): Pick<LambdaClient, 'send'> {
  const authorize = (action: string, functionArn: string, qualifier?: string) => {
    const { arn } = iam.lambda.function(functionArn);
    iam.authorizeAs(step, { action, resource: qualifier === undefined ? arn : `${arn}:${qualifier}`, context: iam.lambda.tagContext(functionArn) });
  };
  const send = async (command: ListVersionsByFunctionCommand | DeleteFunctionCommand): Promise<unknown> => {
    if (command instanceof ListVersionsByFunctionCommand) {
      const { FunctionName, Marker } = command.input;
      authorize('lambda:ListVersionsByFunction', FunctionName!);
      const versions = iam.lambda.list(FunctionName!);
      const start = Marker === undefined ? 0 : Number(Marker);
      const next = start + 50;
      return { Versions: versions.slice(start, next).map((Version) => ({ Version })), ...(next < versions.length && { NextMarker: String(next) }) };
    }
    if (command instanceof DeleteFunctionCommand) {
      const { FunctionName, Qualifier } = command.input;
      if (Qualifier === undefined) throw new Error('the twin does not delete a whole function (DeleteFunction without a Qualifier): nothing in savepoint may');
      authorize('lambda:DeleteFunction', FunctionName!, Qualifier);
      iam.lambda.delete(FunctionName!, Qualifier);
      return {};
    }
    throw new Error(`the twin's Lambda API stands in only for ListVersionsByFunction and DeleteFunction, not ${(command as object).constructor.name}`);
  };
  return { send } as unknown as Pick<LambdaClient, 'send'>;
}
