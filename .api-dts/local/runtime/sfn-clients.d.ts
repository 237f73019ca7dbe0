import { SFNClient } from '@aws-sdk/client-sfn';
import type { TwinIam } from '../aws/iam/index.js';
/**
 * A Step Functions client per step, signing with the step's role credentials (each Lambda function
 * has its own clients and role), made once per role and destroyed by `close`. Without IAM, or for a
 * step the template has no function for, the operator's client.
 */
export declare function roleClients(iam: TwinIam | undefined, operator: SFNClient, endpoint: {
    url: string;
    requestHandler: SFNClient['config']['requestHandler'];
}): {
    of: (step: string) => SFNClient;
    close: () => void;
};
