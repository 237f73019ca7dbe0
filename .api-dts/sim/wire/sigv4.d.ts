import { type WireRequest } from './http.js';
/**
 * Checks a request's AWS Signature Version 4 the way AWS does: the credential scope must name the
 * expected region and service and the date of `x-amz-date`, the access key must be known, the body
 * must hash to `x-amz-content-sha256`, and the signature, recomputed over the headers the client
 * signed with the same secret, must match. The recomputation uses the SDK's own signer
 * (`@smithy/signature-v4`) rather than a copy of the algorithm.
 */
export interface SigV4Expectation {
    region: string;
    service: string;
    /** Secret access keys by access key id. */
    secrets: ReadonlyMap<string, string>;
}
export interface SigV4Failure {
    /** The AWS error name (`x-amzn-errortype`). */
    name: 'IncompleteSignatureException' | 'InvalidSignatureException' | 'UnrecognizedClientException';
    message: string;
}
export declare function sigV4Problem(request: WireRequest, expected: SigV4Expectation): Promise<SigV4Failure | undefined>;
