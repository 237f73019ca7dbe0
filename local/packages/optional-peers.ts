/**
 * savepoint's optional peer dependencies (package.json `peerDependenciesMeta`): an application that
 * only deploys, or only calls a deployed stack, installs none of them, and each is loaded only by
 * what needs it. A command that needs one that is not installed says which, and the install
 * command, instead of Node's "Cannot find package … imported from <a chunk in a cache>"
 * (test/unit/optional-peers.test.ts keeps this table equal to package.json's).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Each optional peer, and what of savepoint needs it (the start of the sentence that says so). */
export const OPTIONAL_PEERS = {
  'aws-local-stepfunctions': 'the local engine runs the state machine with aws-local-stepfunctions',
  dynalite: 'the DynamoDB ledger on this machine (--ledger dynalite) runs on dynalite',
  'aws-cdk-lib': 'the local engine synthesizes the stack with the CDK',
  constructs: 'the local engine synthesizes the stack with the CDK',
  esbuild: 'savepoint compiles TypeScript agents with esbuild',
} as const;

export type OptionalPeer = keyof typeof OPTIONAL_PEERS;

const PEER_NAMES = Object.keys(OPTIONAL_PEERS) as OptionalPeer[];

/** A quoted specifier that is a peer or one of its modules: `'aws-cdk-lib'`, `'aws-cdk-lib/aws-iam'`. */
const NAMED_PEER = new RegExp(`'(${PEER_NAMES.map((name) => name.replace(/[.-]/g, '\\$&')).join('|')})(?:/[^']*)?'`);

/**
 * The optional peer whose absence made a module fail to load: Node's `import` of a package it cannot
 * find (ERR_MODULE_NOT_FOUND, "Cannot find package 'dynalite' imported from …"), or its `require`,
 * which the CLI bundle of a checkout uses for CommonJS packages (bin/bundle.js: MODULE_NOT_FOUND,
 * "Cannot find module 'aws-cdk-lib/aws-iam'"). Undefined for any other error.
 */
export function missingPeer(error: unknown): OptionalPeer | undefined {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return undefined;
  return NAMED_PEER.exec(String(message))?.[1] as OptionalPeer | undefined;
}

/** What to tell the user who lacks `peer`: what needs it, and the command that installs it. */
export function missingPeerMessage(peer: OptionalPeer): string {
  const install = peer === 'aws-cdk-lib' || peer === 'constructs' ? 'aws-cdk-lib constructs' : peer;
  return `${OPTIONAL_PEERS[peer]}, an optional peer dependency of savepoint: npm install -D ${install}`;
}

/**
 * Throws missingPeerMessage unless `peer` resolves from `from` (by default, from here: where the
 * modules that import it resolve it): called before a command makes anything that the peer's
 * import would fail after (a state directory, a lock).
 */
export function requirePeer(peer: OptionalPeer, from: string = import.meta.url): void {
  try {
    createRequire(from).resolve(peer);
  } catch (error) {
    throw new Error(missingPeerMessage(peer), { cause: error });
  }
}

/**
 * The version of `peer` as `from` resolves it (by default, from here), or undefined when it is not
 * installed. Read from the package.json above the module it resolves to: a package's `exports` may
 * not expose its package.json (aws-local-stepfunctions's does not), and savepoint installed has no
 * node_modules of its own to look in (its peers are beside it).
 */
export function peerVersion(peer: OptionalPeer, from: string = import.meta.url): string | undefined {
  let dir: string;
  try {
    dir = dirname(createRequire(from).resolve(peer));
  } catch {
    return undefined;
  }
  for (;;) {
    const file = join(dir, 'package.json');
    // A package.json without the peer's name is one of its folders' (`{ "type": "module" }`).
    const manifest = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown }) : undefined;
    if (manifest?.name === peer) return String(manifest.version);
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
