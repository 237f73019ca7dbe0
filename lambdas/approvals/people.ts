/**
 * Who is who, as the deployment declares it (construct props on AWS, the local runner's options):
 * each person by a name of their own, with the IAM principals that are them. A decision and a
 * start are both recorded under the person's name, whichever way the person came — a signed link
 * (named for its approver), an IAM principal, the local user — so that separation of duties and
 * "a second approver" compare people, not routes: one person who decides once by IAM and once by
 * a link counts once.
 *
 *   approverPrincipals  { "alice@example.com": ["arn:aws:sts::111122223333:assumed-role/AWSReservedSSO_Finance_0a1b/alice@example.com"],
 *                         "ops":               ["arn:aws:iam::111122223333:role/Approver"] }
 *   approvers (links)   ["alice@example.com", "bob@example.com"]
 *
 * Alice's link and Alice's Identity Center session are one person (her name is the key of her
 * principals and the address of her link); every session of the Approver role is one person, "ops".
 * A principal's pattern is one of:
 *   arn:<p>:iam::<acct>:user/<path/><name>                   that IAM user
 *   arn:<p>:iam::<acct>:role/<path/><name>                   every session of that role
 *   arn:<p>:sts::<acct>:assumed-role/AWSReservedSSO_<set>_<id>/<user>
 *                                                            IAM Identity Center's session of that user (`*`, `?` wildcards):
 *                                                            only there is a session name not its caller's choice
 * and locally the runner's user (`local:<user>`), exactly. Nothing in a run, its input or the
 * model reaches these lists.
 */

/** Each person's name, and the principal patterns that are them. */
export type PrincipalDirectory = Readonly<Record<string, readonly string[]>>;

/** The people a deployment names: who may decide by IAM, who may start runs, who is sent a link. */
export interface People {
  /** May decide through the signed API (IAM; the local user on loopback). Nobody else may. */
  readonly approverPrincipals: PrincipalDirectory;
  /** May start runs through the runs API. @default anyone IAM lets call it */
  readonly starterPrincipals?: PrincipalDirectory;
  /** Are sent a signed link, named as they are named in the directories. */
  readonly linkApprovers: readonly string[];
}

const USER = /^arn:(aws[\w-]*):iam::(\d{12}):user\/(?:[\w+=,.@-]+\/)*[\w+=,.@-]+$/;
const ROLE = /^arn:(aws[\w-]*):iam::(\d{12}):role\/((?:[\w+=,.@-]+\/)*)([\w+=,.@-]+)$/;
const SESSION = /^arn:(aws[\w-]*):sts::(\d{12}):assumed-role\/([\w+=,.@-]+)\/([\w+=,.@*?-]+)$/;

/** Why a principal pattern cannot be used (what the construct refuses at synth, naming it), or undefined. */
export function principalPatternProblem(pattern: string): string | undefined {
  const session = SESSION.exec(pattern);
  // Whoever calls AssumeRole names the session: only IAM Identity Center's roles, which only it
  // assumes, naming each session after its user, tell people apart by session name.
  if (session && !session[3]!.startsWith('AWSReservedSSO_')) {
    return `${JSON.stringify(pattern)}: a session name tells people apart only on IAM Identity Center's roles (AWSReservedSSO_…), since whoever assumes ${session[3]} chooses it; name the role (every session one person) instead`;
  }
  if (USER.test(pattern) || ROLE.test(pattern) || session) return undefined;
  return `expected an IAM user or role ARN, or an assumed-role session ARN (arn:aws:sts::<account>:assumed-role/<role>/<session>, wildcards in the session only), got ${JSON.stringify(pattern)}`;
}

/** Whether the caller API Gateway verified (`requestContext.identity.userArn`, or the local user) is `pattern`. */
export function principalMatches(pattern: string, caller: string): boolean {
  if (USER.test(pattern)) return pattern === caller;
  const role = ROLE.exec(pattern);
  if (role) {
    // A role's caller is one of its sessions; the session ARN drops the role's path.
    const [, partition, account, , name] = role;
    const prefix = `arn:${partition}:sts::${account}:assumed-role/${name}/`;
    return caller.startsWith(prefix) && caller.length > prefix.length && !caller.slice(prefix.length).includes('/');
  }
  const session = SESSION.exec(pattern);
  if (session) {
    const [, partition, account, roleName, sessionGlob] = session;
    if (!roleName!.startsWith('AWSReservedSSO_')) return false; // its caller names the session (principalPatternProblem)
    const prefix = `arn:${partition}:sts::${account}:assumed-role/${roleName}/`;
    if (!caller.startsWith(prefix)) return false;
    const source = sessionGlob!.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]');
    return new RegExp(`^${source}$`).test(caller.slice(prefix.length));
  }
  // Locally the caller is the runner's user (`local:<user>`): only itself.
  return !pattern.startsWith('arn:') && pattern === caller;
}

export type Resolved = { ok: true; person: string } | { ok: false; reason: 'nobody' | 'ambiguous'; message: string };

/**
 * The one person `caller` is in `directories`: refused when it is nobody there, or when it
 * matches the principals of two people (the directory is ambiguous: say which, so it is fixed).
 */
export function personIn(caller: string, directories: readonly (PrincipalDirectory | undefined)[], what: string): Resolved {
  const people = new Set<string>();
  for (const directory of directories) {
    for (const [person, patterns] of Object.entries(directory ?? {})) if (patterns.some((pattern) => principalMatches(pattern, caller))) people.add(person);
  }
  if (people.size === 1) return { ok: true, person: [...people][0]! };
  if (people.size === 0) return { ok: false, reason: 'nobody', message: `${caller} is not one of this deployment's ${what}` };
  return { ok: false, reason: 'ambiguous', message: `${caller} matches the principals of ${[...people].sort().join(' and ')}: one principal must be one person (fix approverPrincipals / starterPrincipals)` };
}

/** Every name the deployment gives a person: a starter recorded under one of them is someone it can tell apart from the others. */
export function namedPeople(people: People): ReadonlySet<string> {
  return new Set([...Object.keys(people.approverPrincipals), ...Object.keys(people.starterPrincipals ?? {}), ...people.linkApprovers]);
}

/** A directory from the `{ person: pattern | patterns }` a deployment writes. */
export function principalDirectory(given: Readonly<Record<string, string | readonly string[]>> | undefined): PrincipalDirectory {
  return Object.fromEntries(Object.entries(given ?? {}).map(([person, patterns]) => [person, typeof patterns === 'string' ? [patterns] : [...patterns]]));
}

/**
 * The person a run is started as (recorded as its `startedBy`): one of `starterPrincipals`' people
 * when the deployment names them (anyone else is refused), else whoever the principal is among
 * all the people it names (an approver who starts a run is that person), else the principal's own
 * identity (`fallback`): a starter the deployment names nowhere, whose runs' approvals need two
 * people (policy.ts `starterUnknown`).
 */
export function starterPerson(principal: string, fallback: string, directories: { approverPrincipals?: PrincipalDirectory; starterPrincipals?: PrincipalDirectory }): Resolved {
  if (directories.starterPrincipals) {
    const starter = personIn(principal, [directories.starterPrincipals], 'starter principals (approvals.starterPrincipals)');
    if (!starter.ok) return starter;
  }
  const resolved = personIn(principal, [directories.approverPrincipals, directories.starterPrincipals], 'people');
  return resolved.ok || resolved.reason === 'ambiguous' ? resolved : { ok: true, person: fallback };
}
