import { SFNClient } from '@aws-sdk/client-sfn';
import { localAwsConfig } from '../services/aws-config.js';
import type { TwinIam } from '../aws/iam/index.js';

/**
 * A Step Functions client per step, signing with the step's role credentials (each Lambda function
 * has its own clients and role), made once per role and destroyed by `close`. Without IAM, or for a
 * step the template has no function for, the operator's client.
 */
export function roleClients(
  iam: TwinIam | undefined,
  operator: SFNClient,
  endpoint: { url: string; requestHandler: SFNClient['config']['requestHandler'] },
): { of: (step: string) => SFNClient; close: () => void } {
  const clients = new Map<string, SFNClient>();
  return {
    of: (step) => {
      const credentials = iam?.credentialsOf(step);
      if (!credentials) return operator;
      let client = clients.get(credentials.accessKeyId);
      if (!client) {
        client = new SFNClient({ ...localAwsConfig, credentials, endpoint: endpoint.url, requestHandler: endpoint.requestHandler });
        clients.set(credentials.accessKeyId, client);
      }
      return client;
    },
    close: () => {
      for (const client of clients.values()) client.destroy();
      clients.clear();
    },
  };
}
