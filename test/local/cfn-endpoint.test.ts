import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { describe, expect, it } from 'vitest';
import { localAwsConfig } from '../../local/services/aws-config.js';
import { startCfnEndpoint } from '../../local/services/cloudformation.js';

describe('the CloudFormation endpoint', () => {
  it('serves DescribeStacks only to a client that carries its credential, as the other loopback endpoints do', async () => {
    const cfn = await startCfnEndpoint([{ stackName: 'Savepoint', outputs: [{ key: 'ApprovalApiUrl', value: 'http://127.0.0.1:1/secret/v1/approvals' }] }]);
    const owner = new CloudFormationClient({ ...localAwsConfig, endpoint: cfn.url, maxAttempts: 1 });
    const stranger = new CloudFormationClient({ ...localAwsConfig, endpoint: new URL(cfn.url).origin, maxAttempts: 1 });
    try {
      const refused = await stranger.send(new DescribeStacksCommand({ StackName: 'Savepoint' })).then(
        () => undefined,
        (error: Error & { $metadata?: { httpStatusCode?: number } }) => ({ name: error.name, status: error.$metadata?.httpStatusCode }),
      );
      expect(refused).toEqual({ name: 'InvalidClientTokenId', status: 403 });
      const { Stacks } = await owner.send(new DescribeStacksCommand({ StackName: 'Savepoint' }));
      expect(Stacks?.[0]?.Outputs).toEqual([{ OutputKey: 'ApprovalApiUrl', OutputValue: 'http://127.0.0.1:1/secret/v1/approvals' }]);
    } finally {
      owner.destroy();
      stranger.destroy();
      await cfn.close();
    }
  });
});
