/**
 * The real AWS SDK clients, pointed at loopback: a region and static credentials so that no
 * credential chain is consulted (there are none on a developer machine or in CI).
 */
export declare const localAwsConfig: {
    readonly region: 'us-east-1';
    readonly credentials: {
        readonly accessKeyId: 'local';
        readonly secretAccessKey: 'local';
    };
};
