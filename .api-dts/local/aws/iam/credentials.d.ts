import type { Caller } from './authorizer.js';
export declare const CREDENTIALS_KEY_FILE: string;
export interface AccessKey {
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
}
export declare class RoleCredentials {
    #private;
    private constructor();
    /** The credentials of a state directory (or of this process only, without one). */
    static open(stateDir?: string): RoleCredentials;
    /**
     * The access key of a role's session (a Lambda function's session is its function's name), the
     * same every time for the same state directory.
     */
    of(role: string, session?: string): AccessKey;
    /** Who signed a request, from its Authorization header: a role whose key this process handed out, else the administrator. */
    callerOf(authorization: string | undefined): Caller;
}
/** `AWS4-HMAC-SHA256 Credential=AKID/20261201/us-east-1/states/aws4_request, …` → AKID. */
export declare function accessKeyIdOf(authorization: string | undefined): string | undefined;
