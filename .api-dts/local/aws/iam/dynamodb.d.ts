import type { StorageCall } from '../../../lambdas/ledger/storage-ledger.js';
import type { CfnTemplateJson, PhysicalNames } from '../../template/asl.js';
import type { TwinIam } from './index.js';
import type { AuthorizationRequest } from './policy.js';
/** The ledger as `step`'s function sees it: each of its calls, and every storage call it makes, made as that step. */
export declare function ledgerAs<L extends object>(step: string, ledger: L): L;
/** The ledger table's ARN in a deployment: the template's one DynamoDB table. */
export declare function ledgerTableArn(template: CfnTemplateJson, physical: PhysicalNames): string | undefined;
/** The DynamoDB requests one storage call stands for. */
export declare function dynamoRequests(call: StorageCall, tableArn: string): AuthorizationRequest[];
/**
 * The guard the ledger's storage engine is given (`guardStorage`): each call made as a step is
 * authorized as that step's role (`authorizeAs` throws AccessDeniedException to refuse it). A
 * step's first call reads the seal key before it (`sealKeyArn`): the DynamoDB ledger of a Lambda
 * function reads it from Secrets Manager on its first use (lambdas/adapters/aws-deps.ts); a read
 * that is refused is tried again on the next call, as a failed cold start is. (Once per step in
 * this process: the functions a local deploy publishes are not cold-started again.)
 */
export declare function dynamoGuard(tableArn: () => string, iam: Pick<TwinIam, 'authorizeAs' | 'servicesOf'>): (call: StorageCall) => void;
