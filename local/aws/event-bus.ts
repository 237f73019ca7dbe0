/**
 * The account's default event bus, as the twin's functions put events on it and as its rules match
 * them.
 *
 * Put: what a rule on the bus with no pattern beyond the source would receive (every entry put, in
 * order). The approval notifier's events go here after the twin authorized them and checked them
 * against EventBridge's request rules (local/aws/iam/services.ts); a test reads it as such a rule's
 * target would, and so can see what any rule in the account could read (no approver's link:
 * lambdas/approvals/notify.ts). Bounded: the oldest entries leave once LIMIT newer ones are kept.
 *
 * Rules: the template's rules on "Step Functions Execution Status Change" decide which function
 * hears an execution end (`statusChangeRules`), by their event patterns as EventBridge matches them
 * — the forms the stack relies on, and no other: a value matches an array of exact values, or a
 * `{ "prefix": "…" }` content filter on a string ("Content filtering in Amazon EventBridge event
 * patterns", https://docs.aws.amazon.com/eventbridge/latest/userguide/content-filtering-with-event-patterns.html);
 * every field named must be there. A pattern is at most EVENT_PATTERN_MAX_CHARS characters, the
 * default quota ("Event pattern size", https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-quota.html):
 * a longer one, or one using a filter the twin does not evaluate, is refused as PutRule refuses a
 * pattern it will not take (InvalidEventPatternException), and the template with it.
 */
import type { EventEntry } from '../../lambdas/approvals/notify.js';
import { resolveTemplateValue, type CfnTemplateJson, type PhysicalNames } from '../template/asl.js';
import { AwsClientError } from './client-error.js';

const LIMIT = 1_000;

/** EventBridge's default quota on an event pattern's size, in characters (adjustable to 4,096 on request). */
export const EVENT_PATTERN_MAX_CHARS = 2_048;

export class LocalEventBus {
  readonly #entries: EventEntry[] = [];

  /** Entries EventBridge accepted (a failed entry is not on the bus). */
  put(entries: readonly EventEntry[]): void {
    this.#entries.push(...entries);
    if (this.#entries.length > LIMIT) this.#entries.splice(0, this.#entries.length - LIMIT);
  }

  /** What a rule matching `source` (every detail-type, every detail) has received so far. */
  receivedBy(source: string): readonly EventEntry[] {
    return this.#entries.filter((entry) => entry.Source === source);
  }
}

/** An event pattern as a rule holds it (field → values, or field → a nested pattern). */
export type EventPattern = { readonly [field: string]: readonly unknown[] | EventPattern };

/** Refuses a pattern EventBridge would not take, or the twin could not match as it does (InvalidEventPatternException). */
export function checkEventPattern(pattern: unknown, where: string): EventPattern {
  const chars = JSON.stringify(pattern).length;
  if (chars > EVENT_PATTERN_MAX_CHARS) {
    throw new AwsClientError('InvalidEventPatternException', `${where}: the event pattern is ${chars} characters, over EventBridge's ${EVENT_PATTERN_MAX_CHARS} (Event pattern size)`);
  }
  const walk = (node: unknown, path: string): void => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) throw new AwsClientError('InvalidEventPatternException', `${where}: ${path || 'the pattern'} must be an object of fields`);
    for (const [field, value] of Object.entries(node)) {
      const at = path ? `${path}.${field}` : field;
      if (!Array.isArray(value)) {
        walk(value, at);
        continue;
      }
      if (value.length === 0) throw new AwsClientError('InvalidEventPatternException', `${where}: ${at} matches nothing (an empty array)`);
      for (const filter of value) {
        if (typeof filter !== 'object' || filter === null) continue;
        const keys = Object.keys(filter);
        if (!(keys.length === 1 && keys[0] === 'prefix' && typeof (filter as { prefix: unknown }).prefix === 'string')) {
          throw new AwsClientError('InvalidEventPatternException', `${where}: ${at}: the twin evaluates exact values and { "prefix": "…" } only, not ${JSON.stringify(filter)}`);
        }
      }
    }
  };
  walk(pattern, '');
  return pattern as EventPattern;
}

/** Whether `event` matches `pattern` (a checked one: `checkEventPattern`), as EventBridge decides it. */
export function matchesEventPattern(pattern: EventPattern, event: unknown): boolean {
  if (typeof event !== 'object' || event === null) return false;
  return Object.entries(pattern).every(([field, wanted]) => {
    if (!(field in event)) return false;
    const value = (event as Record<string, unknown>)[field];
    if (!Array.isArray(wanted)) return matchesEventPattern(wanted as EventPattern, value);
    // An array in the event matches when any of its values does.
    const values = Array.isArray(value) ? value : [value];
    return values.some((one) => wanted.some((filter) => matchesValue(filter, one)));
  });
}

function matchesValue(filter: unknown, value: unknown): boolean {
  if (typeof filter === 'object' && filter !== null) return typeof value === 'string' && value.startsWith((filter as { prefix: string }).prefix);
  return filter === value;
}

/** A rule of the template on executions' status changes: its pattern, resolved, and the steps (SAVEPOINT_STEP) of the functions it targets. */
export interface StatusChangeRule {
  readonly id: string;
  readonly pattern: EventPattern;
  readonly steps: readonly string[];
}

/**
 * The template's rules on "Step Functions Execution Status Change", each pattern resolved to the
 * deployment's ARNs (`physical`) and checked, each target named by its function's step. A target
 * that is not one of the template's step functions is left out (the twin runs nothing else).
 */
export function statusChangeRules(template: CfnTemplateJson, physical?: PhysicalNames): StatusChangeRule[] {
  const resources = template.Resources ?? {};
  const rules: StatusChangeRule[] = [];
  for (const [id, resource] of Object.entries(resources)) {
    if (resource.Type !== 'AWS::Events::Rule') continue;
    const raw = resource.Properties?.['EventPattern'] as { source?: unknown } | undefined;
    if (!raw || !JSON.stringify(raw.source ?? []).includes('"aws.states"')) continue;
    const pattern = checkEventPattern(resolveTemplateValue(raw, template, { ...(physical && { physical }), where: `rule ${id}` }), `rule ${id}`);
    const steps = ((resource.Properties?.['Targets'] as { Arn?: { 'Fn::GetAtt'?: [string, string] } }[] | undefined) ?? []).flatMap((target) => {
      const fn = resources[target.Arn?.['Fn::GetAtt']?.[0] ?? ''];
      const step = (fn?.Properties?.['Environment'] as { Variables?: Record<string, unknown> } | undefined)?.Variables?.['SAVEPOINT_STEP'];
      return fn?.Type === 'AWS::Lambda::Function' && typeof step === 'string' ? [step] : [];
    });
    rules.push({ id, pattern, steps });
  }
  return rules;
}
