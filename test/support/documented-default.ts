import { readFileSync } from 'node:fs';

/**
 * The `@default` text of a property's TSDoc, as a user reads it in the API reference: `owner` is
 * the declaration holding it (`interface LoopOptions`, `const RunConfig`), `property` the name the
 * doc comment stands above. Throws, naming what is missing, when either is not found or the
 * comment has no `@default`: a test over a default must not pass on a doc that says nothing.
 */
export function documentedDefault(file: string, owner: string, property: string): string {
  const source = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
  const start = source.search(new RegExp(`(interface|const|class) ${owner}\\b`));
  if (start < 0) throw new Error(`${file}: no declaration ${owner}`);
  // The declaration runs to the next exported one.
  const end = source.indexOf('\nexport ', start + 1);
  const declaration = source.slice(start, end < 0 ? undefined : end);
  // The comment right above `property:` (or `readonly property?:`).
  const found = new RegExp(`/\\*\\*((?:(?!\\*/)[\\s\\S])*)\\*/\\s*(?:readonly\\s+)?${property}\\??\\s*:`).exec(declaration);
  if (!found) throw new Error(`${file}: ${owner} has no documented property ${property}`);
  const text = found[1]!
    .split('\n')
    .map((line) => line.replace(/^\s*\*\s?/, '').trim())
    .join(' ');
  const tag = /@default\s+((?:(?!\s@\w)[\s\S])*)/.exec(text);
  if (!tag) throw new Error(`${file}: ${owner}.${property} has no @default`);
  return tag[1]!.trim();
}

/**
 * The value a `@default` text begins with: a number (`20_000`, `0.75`), a quoted string (`'stop'`),
 * `true` or `false`; the rest (`(4 hours)`, why) is prose. Throws when it begins with none.
 */
export function leadingValue(text: string): number | string | boolean {
  const number = /^-?\d[\d_]*(\.\d+)?(?![\w.])/.exec(text);
  if (number) return Number(number[0].replaceAll('_', ''));
  const quoted = /^'([^']*)'/.exec(text);
  if (quoted) return quoted[1]!;
  const boolean = /^(true|false)\b/.exec(text);
  if (boolean) return boolean[1] === 'true';
  throw new Error(`@default ${JSON.stringify(text)} begins with no value`);
}

/** A `@default` written as an object literal (`{ maxSteps: 400, onBudgetExceeded: 'stop' }`), field by field. */
export function literalFields(text: string): Record<string, number | string | boolean> {
  const body = /^\{([^}]*)\}/.exec(text);
  if (!body) throw new Error(`@default ${JSON.stringify(text)} is no object literal`);
  return Object.fromEntries(
    body[1]!
      .split(',')
      .map((field) => field.trim())
      .filter(Boolean)
      .map((field) => {
        const [name, value] = field.split(/:\s*/) as [string, string];
        return [name, leadingValue(value)];
      }),
  );
}
