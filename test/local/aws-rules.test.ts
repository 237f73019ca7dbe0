import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AWS_RULE_SUPPORT, AWS_RULES } from '../../local/aws/rules.js';
import { sourceFiles } from '../architecture/import-graph.js';

/**
 * AWS's rules live in one room of the twin (local/aws/), each in a file that links the page of
 * AWS's documentation stating it, each listed in AWS_RULES with the test that holds the twin to it.
 * This holds the table to the files: a rule's file without a row, a row whose file does not link
 * its page, or whose test does not name what the rule answers, fails here.
 */
const ROOT = new URL('../..', import.meta.url).pathname;
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const ruleFiles = sourceFiles(ROOT, ['local/aws']);

describe("AWS's rules in local/aws/", () => {
  it('are read from the folder (the check is not vacuous)', () => {
    expect(ruleFiles).toEqual(expect.arrayContaining(['local/aws/sfn-api-throttling.ts', 'local/aws/iam/policy.ts']));
    expect(AWS_RULES.length).toBeGreaterThan(15);
  });

  it('each have a row: every file of local/aws/ holds a rule of AWS_RULES, or is named as support', () => {
    const listed = new Set([...AWS_RULES.map((rule) => rule.file), ...Object.keys(AWS_RULE_SUPPORT)]);
    expect(ruleFiles.filter((file) => !listed.has(file))).toEqual([]);
    expect(Object.keys(AWS_RULE_SUPPORT).filter((file) => !ruleFiles.includes(file))).toEqual([]);
  });

  it.each(AWS_RULES.map((rule) => [rule.rule, rule] as const))('%s: its file links the page of AWS that states it, and names its answer', (_name, rule) => {
    expect(rule.file.startsWith('local/aws/') && ruleFiles.includes(rule.file), `${rule.file} is a file of local/aws/`).toBe(true);
    expect(rule.doc).toMatch(/^https:\/\/docs\.aws\.amazon\.com\//);
    expect(read(rule.file)).toContain(rule.doc);
    expect(read(rule.file)).toContain(rule.answer);
  });

  it.each(AWS_RULES.map((rule) => [rule.rule, rule] as const))('%s: its test is there and checks its answer', (_name, rule) => {
    expect(existsSync(join(ROOT, rule.test)), rule.test).toBe(true);
    expect(rule.test).toMatch(/\.test\.ts$/);
    expect(read(rule.test)).toContain(rule.answer);
  });
});
