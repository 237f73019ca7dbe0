import { describe, expect, it } from 'vitest';
import { AWS_RULES } from '../../local/aws/rules.js';
import { DOC_FILES } from './readme-text.js';

/**
 * docs/local-twin.md's table of AWS's rules is local/aws/rules.ts's list, row for row, in its
 * order: what AWS does and its page, AWS's answer, the twin's file and its test. A rule added to
 * the twin without its row (or a row left when a rule goes) fails here, naming it.
 */
describe("the local twin guide's table of AWS's rules", () => {
  it('is the list of local/aws/rules.ts', () => {
    const guide = DOC_FILES.get('docs/local-twin.md');
    expect(guide).toBeDefined();
    const table = /\| what AWS does \(its documentation\) \|.*\n\|[-|]+\|\n((?:\|.*\|\n?)+)/.exec(guide!)?.[1];
    expect(table, 'the table').toBeDefined();
    const rows = table!.trim().split('\n').map((row) => {
      const cells = row.split(' | ').map((cell) => cell.replace(/^\| |\s*\|$/g, ''));
      const [, rule, doc] = /^\[(.*)\]\((\S+)\)$/.exec(cells[0]!) ?? [];
      return { rule, doc, answer: cells[1]!.replace(/`/g, ''), file: cells[2]!.replace(/`/g, ''), test: cells[3]!.replace(/`/g, '') };
    });
    expect(AWS_RULES.length).toBeGreaterThan(20);
    expect(rows).toEqual(AWS_RULES.map(({ rule, doc, answer, file, test }) => ({ rule, doc, answer, file, test })));
  });
});
