/**
 * Each role's own credentials, so that a local call carries its caller's identity as it does on
 * AWS: a Lambda function's SDK clients sign with its role's access key, and the endpoint it calls
 * knows the role from the SigV4 `Credential=` access key id. The keys derive from one random key
 * in the state directory (`keys/iam-credentials.key`, readable by its owner only), so they hold
 * across restarts without a file per role; in memory when there is no state directory.
 *
 * Any other key is the account's administrator: the person at the CLI (`local`, local/services/aws-config.ts,
 * or the operator's own keys against a stack), who on AWS would hold AdministratorAccess. Which
 * keys are genuine at all — verifying the signature — is the endpoint's request entry's concern
 * (local credentials for local endpoints), not this module's: IAM here decides what a role may do.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { readOrCreateKeyFile } from '../../../lambdas/ledger/seal.js';
import type { Caller } from './authorizer.js';

export const CREDENTIALS_KEY_FILE = join('keys', 'iam-credentials.key');

export interface AccessKey {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

export class RoleCredentials {
  readonly #key: Buffer;
  readonly #callers = new Map<string, { role: string; session: string }>();

  private constructor(key: Buffer) {
    this.#key = key;
  }

  /** The credentials of a state directory (or of this process only, without one). */
  static open(stateDir?: string): RoleCredentials {
    return new RoleCredentials(stateDir ? readOrCreateKeyFile(join(stateDir, CREDENTIALS_KEY_FILE)) : randomBytes(32));
  }

  /**
   * The access key of a role's session (a Lambda function's session is its function's name), the
   * same every time for the same state directory.
   */
  of(role: string, session: string = role): AccessKey {
    const label = `${role}/${session}`;
    const accessKeyId = `ASIA${this.#derive(`id:${label}`).toString('hex').slice(0, 16).toUpperCase()}`;
    this.#callers.set(accessKeyId, { role, session });
    return { accessKeyId, secretAccessKey: this.#derive(`secret:${label}`).toString('base64').slice(0, 40) };
  }

  /** Who signed a request, from its Authorization header: a role whose key this process handed out, else the administrator. */
  callerOf(authorization: string | undefined): Caller {
    const accessKeyId = accessKeyIdOf(authorization);
    return (accessKeyId !== undefined && this.#callers.get(accessKeyId)) || { administrator: true };
  }

  #derive(label: string): Buffer {
    return createHmac('sha256', this.#key).update(label).digest();
  }
}

/** `AWS4-HMAC-SHA256 Credential=AKID/20261201/us-east-1/states/aws4_request, …` → AKID. */
export function accessKeyIdOf(authorization: string | undefined): string | undefined {
  return /Credential=([^/,\s]+)\//.exec(authorization ?? '')?.[1];
}
