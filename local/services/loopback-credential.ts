import { randomBytes } from 'node:crypto';
import { sameSecretAs } from '../../lambdas/shared/same-secret.js';
import type { HttpService, ServiceReply } from '../../sim/in-process.js';

/**
 * The credential of the local engine's loopback endpoints (the approval API, the Step Functions
 * API, the ledger). Loopback is reachable by every user of the machine, so an address alone is no
 * protection: each endpoint that can change a run serves only requests whose path starts with a
 * random secret, `http://127.0.0.1:<port>/<credential>/…`. The full address is published only in
 * `engine.json`, inside the private state directory (local/state/private-state.ts), so only the
 * directory's owner can read it. A path prefix rather than a header, because the real AWS SDK
 * clients keep an endpoint's path (`new SFNClient({ endpoint })`) and need no change to carry it.
 * The signed links of the approval page are their own credential and need none of this.
 */

/** A fresh credential: 32 random bytes, URL-safe. */
export function newLoopbackCredential(): string {
  return randomBytes(32).toString('base64url');
}

/** `origin` with the credential as its first path segment, then `path` (e.g. `/v1/approvals`). */
export function credentialedUrl(origin: string, credential: string, path = ''): string {
  return `${origin}/${credential}${path}`;
}

/**
 * An endpoint's check of `credential`: a request's path without its credential, or undefined when
 * it does not start with it (compared in constant time: the answer's timing tells nothing of the
 * secret). Made once per endpoint: the credential's digest is taken once, not on every request.
 */
export function credentialChecker(credential: string): (path: string) => string | undefined {
  const matches = sameSecretAs(credential);
  return (path) => {
    const offered = /^\/([^/?#]*)/.exec(path)?.[1] ?? '';
    if (!matches(offered)) return undefined;
    return path.slice(1 + offered.length) || '/';
  };
}

/** The sentence a request without the credential is refused with (it names the fix, not the secret). */
export const MISSING_CREDENTIAL =
  'credential: missing or wrong; this endpoint serves only its engine owner, who finds the address with its credential in engine.json in the state directory';

/**
 * `service` served only to requests that carry `credential` (the path it sees is the one after
 * it); any other request gets `refused()`. What a loopback endpoint built on sim/in-process.ts
 * puts in front of its service.
 */
export function requireCredential(service: HttpService, credential: string, refused: () => ServiceReply): HttpService {
  const pathAfterCredential = credentialChecker(credential);
  return async (request) => {
    const url = pathAfterCredential(request.url);
    return url === undefined ? refused() : service({ ...request, url });
  };
}
