import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { localAwsConfig } from '../../local/services/aws-config.js';
import { startDynamo } from '../../local/services/dynamodb.js';
import { credentialChecker } from '../../local/services/loopback-credential.js';

describe('the loopback credential', () => {
  it.each([
    ['/s3cret/v1/approvals', '/v1/approvals'],
    ['/s3cret', '/'],
    ['/s3cret/', '/'],
    ['/s3cret?x=1', '?x=1'],
    ['/s3cre/v1', undefined],
    ['/s3cretX/v1', undefined],
    ['/v1/s3cret', undefined],
    ['/', undefined],
  ])('%s → %s', (path, after) => {
    expect(credentialChecker('s3cret')(path)).toBe(after);
  });

  it('guards the DynamoDB emulator too: a client without it is refused, with it served', async () => {
    const dynamo = await startDynamo();
    const stranger = new DynamoDBClient({ ...localAwsConfig, endpoint: new URL(dynamo.endpoint).origin, maxAttempts: 1 });
    try {
      expect(await stranger.send(new ListTablesCommand({})).then(() => 'served', (error: Error) => error.name)).toBe('UnrecognizedClientException');
      expect((await dynamo.client.send(new ListTablesCommand({}))).TableNames).toEqual([]);
    } finally {
      stranger.destroy();
      await dynamo.close();
    }
  });
});
