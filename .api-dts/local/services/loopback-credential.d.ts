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
export declare function newLoopbackCredential(): string;
/** `origin` with the credential as its first path segment, then `path` (e.g. `/v1/approvals`). */
export declare function credentialedUrl(origin: string, credential: string, path?: string): string;
/**
 * The request's path without its credential, or undefined when it does not start with it
 * (compared in constant time: the answer's timing tells nothing of the secret).
 */
export declare function pathAfterCredential(path: string, credential: string): string | undefined;
/** The sentence a request without the credential is refused with (it names the fix, not the secret). */
export declare const MISSING_CREDENTIAL = "credential: missing or wrong; this endpoint serves only its engine owner, who finds the address with its credential in engine.json in the state directory";
/**
 * `service` served only to requests that carry `credential` (the path it sees is the one after
 * it); any other request gets `refused()`. What a loopback endpoint built on sim/in-process.ts
 * puts in front of its service.
 */
export declare function requireCredential(service: HttpService, credential: string, refused: () => ServiceReply): HttpService;
