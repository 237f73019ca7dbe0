/**
 * The real AWS SDK clients, pointed at loopback: a region and static credentials so that no
 * credential chain is consulted (there are none on a developer machine or in CI).
 */
export const localAwsConfig = {
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
} as const;
