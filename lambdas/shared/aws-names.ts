/**
 * What AWS refuses of a deployed name or expression, checked by savepoint/cdk at synth (naming the
 * prop) and by the local twin when it deploys a template (local/aws/cloudformation-template.ts), so
 * that a template the twin runs is one AWS would take.
 */

/**
 * The longest name of a state machine: "name … Length Constraints: Minimum length of 1. Maximum
 * length of 80" (Step Functions API reference, CreateStateMachine).
 */
export const MAX_STATE_MACHINE_NAME = 80;

/**
 * Why EventBridge would refuse a rule's schedule expression, or undefined (EventBridge user guide,
 * "Schedule expressions for rules"): `rate(<n> <unit>)`, the unit singular for 1 and plural
 * otherwise; or a six-field `cron(minutes hours day-of-month month day-of-week year)` with `?` in
 * its day-of-month or day-of-week field.
 */
export function scheduleProblem(expression: string): string | undefined {
  const rate = /^rate\((\d+) (minute|hour|day)(s?)\)$/.exec(expression);
  if (rate) {
    const count = Number(rate[1]);
    if (count < 1) return 'is not a schedule: a rate must be at least 1';
    if ((count === 1) !== (rate[3] === '')) return `is not a schedule: EventBridge wants "${count} ${rate[2]}${count === 1 ? '' : 's'}"`;
    return undefined;
  }
  const cron = /^cron\((.*)\)$/.exec(expression);
  if (cron) {
    const fields = cron[1]!.trim().split(/\s+/);
    if (fields.length !== 6) return `is not a schedule: EventBridge's cron has 6 fields (minutes hours day-of-month month day-of-week year), this has ${fields.length}`;
    if (fields[2] !== '?' && fields[4] !== '?') return 'is not a schedule: EventBridge\'s cron wants "?" in day-of-month or day-of-week';
    return undefined;
  }
  return 'is not a schedule: EventBridge takes rate(...) or cron(...) (Schedule.rate, Schedule.cron)';
}

/**
 * Why Secrets Manager would refuse `reference` as a secret's name or ARN, or undefined: a name is
 * 1–512 characters of letters, digits and `/_+=.@-` (Secrets Manager API reference, CreateSecret
 * `Name`); an ARN is `arn:<partition>:secretsmanager:<region>:<account>:secret:<name>`.
 */
export function secretReferenceProblem(reference: string): string | undefined {
  const name = /^arn:/.test(reference) ? /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:(.*)$/.exec(reference)?.[1] : reference;
  if (name === undefined) return 'is no secret ARN (arn:<partition>:secretsmanager:<region>:<account>:secret:<name>)';
  return /^[A-Za-z0-9/_+=.@-]{1,512}$/.test(name) ? undefined : 'is no secret name Secrets Manager takes (1 to 512 letters, digits and /_+=.@-)';
}

/**
 * Why S3 would refuse `name` as a bucket's name, or undefined: 3–63 characters of lowercase
 * letters, digits, dots and hyphens, starting and ending with a letter or digit (S3 user guide,
 * "General purpose bucket naming rules").
 */
export function bucketNameProblem(name: string): string | undefined {
  return /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(name) ? undefined : 'is no S3 bucket name (3 to 63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit)';
}
