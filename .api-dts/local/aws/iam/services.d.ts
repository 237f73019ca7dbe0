import type { ApprovalSetup } from '../../../lambdas/wiring/create-steps.js';
import type { TwinIam } from './index.js';
/** The ARN of the event bus APPROVAL_EVENT_BUS names (`default`, a bus name, or an ARN). */
export declare function eventBusArn(bus: string): string;
/** The local approval machinery as `step`'s function uses it: each call it would make to AWS authorized as its role. */
export declare function approvalsAs(step: string, setup: ApprovalSetup, iam: Pick<TwinIam, 'authorizeAs' | 'servicesOf'>): ApprovalSetup;
