/**
 * Reading what the README and the guides say of packages (test/readme/statements.test.ts): the
 * prose cut into clauses, and what a clause claims of the packages it names in code marks.
 */

export type Claim = 'dependency' | 'not a dependency' | 'optional peer' | 'devDependency';

/**
 * The prose of a markdown text (code blocks out, bold marks and line breaks flattened), cut into
 * clauses at `;` and at the end of a sentence — outside parentheses, where an aside may hold both.
 */
export function clausesOf(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '\n\n').replace(/\*\*/g, '');
  const paragraphs = prose.split(/\n\s*\n|\n(?=\s*[-|])/).map((paragraph) => paragraph.replace(/\s*\n\s*/g, ' '));
  const clauses: string[] = [];
  for (const paragraph of paragraphs) {
    let depth = 0;
    let start = 0;
    for (let index = 0; index < paragraph.length; index += 1) {
      const char = paragraph[index]!;
      if (char === '(') depth += 1;
      else if (char === ')') depth = Math.max(0, depth - 1);
      const rest = paragraph.slice(index + 1);
      // A sentence ends at its full stop, or at the parenthesis that closes an aside ending in one.
      const ends = char === ';' || (/[.!?]/.test(char) && /^\s+[A-Z`(]/.test(rest)) || (char === ')' && /[.!?]/.test(paragraph[index - 1]!) && /^\s+[A-Z`(]/.test(rest));
      if (depth === 0 && ends) {
        clauses.push(paragraph.slice(start, char === ';' ? index : index + 1));
        start = index + 1;
      }
    }
    clauses.push(paragraph.slice(start));
  }
  return clauses.map((clause) => clause.trim()).filter((clause) => clause !== '');
}

/** What `clause` says of the packages it names in code marks, if it says anything of them. */
export function claimOf(clause: string): { claim: Claim; packages: string[] } | undefined {
  const packages = [...clause.matchAll(/`((?:@[a-z0-9-]+\/)?[a-z0-9][a-z0-9._-]*)`/g)].map((match) => match[1]!).filter((name) => !/\.(?:ts|js|json|md)$/.test(name));
  if (packages.length === 0) return undefined;
  if (/\bneither\b.*\bnor\b.*\bis an? (?:\w+ )?dependency\b|\bis not an? (?:\w+ )?dependency\b|\bare not (?:\w+ )?dependencies\b/.test(clause)) return { claim: 'not a dependency', packages };
  if (/\boptional peers?\b/.test(clause)) return { claim: 'optional peer', packages };
  if (/\bdevDependenc(?:y|ies)\b/.test(clause)) return { claim: 'devDependency', packages };
  if (/\b(?:is an?|are) dependenc(?:y|ies)\b/.test(clause)) return { claim: 'dependency', packages };
  return undefined;
}

