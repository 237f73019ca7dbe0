import { transformSync } from 'esbuild';

/**
 * The functions of a TypeScript source and how many positional parameters each takes, read without
 * the compiler (TypeScript 7's native `tsc` has no JavaScript API; see import-graph.ts): esbuild
 * strips the types, which leaves plain JavaScript where a parameter list is `(…)` before `=>`, or
 * `name(…)` / `function (…)` before a body's `{`. Strings, templates, regular expressions and
 * comments are blanked first, so a bracket or comma inside them counts for nothing. A destructured
 * object is one parameter (that is the cure); a rest parameter is one. Types only (an interface's
 * method, a function type) are not functions: the implementations are what is counted.
 */
export interface FunctionParameters {
  /** The function's name: `completeCall`, `constructor`, the variable or property an arrow is bound to, or `(anonymous)`. */
  readonly name: string;
  readonly parameters: number;
}

/** Every function of `typescript` (a module's source), in order. */
export function functionParameters(typescript: string): FunctionParameters[] {
  const code = transformSync(typescript, { loader: 'ts', target: 'esnext' }).code;
  const skeleton = blankLiterals(code);
  const functions: FunctionParameters[] = [];
  for (const [open, close] of parenPairs(skeleton)) {
    const after = skeleton.slice(close + 1).trimStart();
    const before = skeleton.slice(0, open).trimEnd();
    let name: string | undefined;
    if (after.startsWith('=>')) {
      name = /(?:^|[^\w$.])([\w$]+)\s*[=:]\s*(?:async\s*)?$/.exec(before)?.[1] ?? '(anonymous)';
    } else if (after.startsWith('{')) {
      const word = /([\w$]+)\s*$/.exec(before)?.[1];
      if (word === undefined || NOT_A_FUNCTION.has(word) || /\bextends\b[^{};]*$/.test(before)) continue;
      name = word === 'function' ? ((/([\w$]+)\s*[=:]\s*(?:async\s+)?function\s*\*?\s*$/.exec(before)?.[1]) ?? '(anonymous)') : word;
    } else continue;
    functions.push({ name, parameters: countParameters(skeleton.slice(open + 1, close)) });
  }
  return functions;
}

/** Words that stand before `(…) {` without making a function. */
const NOT_A_FUNCTION = new Set(['if', 'for', 'while', 'switch', 'catch', 'with', 'await', 'return', 'typeof', 'void', 'yield']);

function countParameters(list: string): number {
  if (list.trim() === '') return 0;
  let depth = 0;
  let commas = 0;
  for (const char of list) {
    if ('([{'.includes(char)) depth++;
    else if (')]}'.includes(char)) depth--;
    else if (char === ',' && depth === 0) commas++;
  }
  return list.trimEnd().endsWith(',') ? commas : commas + 1;
}

/** Each `(` with its matching `)`, as indexes into `skeleton`. */
function parenPairs(skeleton: string): [number, number][] {
  const pairs: [number, number][] = [];
  const open: number[] = [];
  for (let i = 0; i < skeleton.length; i++) {
    if (skeleton[i] === '(') open.push(i);
    else if (skeleton[i] === ')') {
      const start = open.pop();
      if (start !== undefined) pairs.push([start, i]);
    }
  }
  return pairs.sort((a, b) => a[0] - b[0]);
}

/** Characters before which a `/` starts a regular expression rather than dividing. */
const BEFORE_REGEX = new Set(['', '(', ',', '=', ':', '[', '!', '&', '|', '?', '{', '}', ';', '+', '-', '*', '%', '<', '>', '~', '^']);
const WORDS_BEFORE_REGEX = /\b(?:return|typeof|case|do|else|in|of|void|delete|new|throw|yield|await)$/;

/**
 * `code` with the insides of its strings, templates (their `${…}` kept as code), regular
 * expressions and comments replaced by spaces, so only code's own brackets and commas are left.
 */
export function blankLiterals(code: string): string {
  const out = code.split('');
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (out[k] !== '\n') out[k] = ' ';
  };
  /** For each `{` open in code: whether it is a template's `${`. */
  const braces: boolean[] = [];
  let i = 0;
  const template = () => {
    // i is just past a backtick or a `}` that closes `${`; scan to the closing backtick or the next `${`.
    const start = i;
    while (i < code.length) {
      if (code[i] === '\\') i += 2;
      else if (code[i] === '`') {
        blank(start, i);
        i++;
        return;
      } else if (code[i] === '$' && code[i + 1] === '{') {
        blank(start, i);
        braces.push(true);
        i += 2;
        return;
      } else i++;
    }
    blank(start, i);
  };
  while (i < code.length) {
    const char = code[i]!;
    const next = code[i + 1];
    if (char === '/' && next === '/') {
      const end = code.indexOf('\n', i);
      blank(i, end === -1 ? code.length : end);
      i = end === -1 ? code.length : end;
    } else if (char === '/' && next === '*') {
      const end = code.indexOf('*/', i + 2);
      blank(i, end === -1 ? code.length : end + 2);
      i = end === -1 ? code.length : end + 2;
    } else if (char === "'" || char === '"') {
      let j = i + 1;
      while (j < code.length && code[j] !== char && code[j] !== '\n') j += code[j] === '\\' ? 2 : 1;
      blank(i + 1, j);
      i = j + 1;
    } else if (char === '`') {
      i++;
      template();
    } else if (char === '{') {
      braces.push(false);
      i++;
    } else if (char === '}') {
      i++;
      if (braces.pop() === true) template();
    } else if (char === '/' && isRegexStart(out, i)) {
      let j = i + 1;
      let inClass = false;
      while (j < code.length && code[j] !== '\n' && (inClass || code[j] !== '/')) {
        if (code[j] === '\\') j++;
        else if (code[j] === '[') inClass = true;
        else if (code[j] === ']') inClass = false;
        j++;
      }
      blank(i + 1, j);
      i = j + 1;
    } else i++;
  }
  return out.join('');
}

/** Whether the `/` at `at` starts a regular expression, by the code before it. */
function isRegexStart(out: readonly string[], at: number): boolean {
  let end = at;
  while (end > 0 && /\s/.test(out[end - 1]!)) end--;
  return BEFORE_REGEX.has(out[end - 1] ?? '') || WORDS_BEFORE_REGEX.test(out.slice(Math.max(0, end - 8), end).join(''));
}
