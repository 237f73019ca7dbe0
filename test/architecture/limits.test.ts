import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as limits from '../../lambdas/shared/limits.js';
import { sourceFiles } from './import-graph.js';

/**
 * AWS's numbers are written once, in lambdas/shared/limits.ts: the harness sizes its work by them
 * and the twin refuses by them, so the two cannot drift apart. This finds any of them written as a
 * literal anywhere else in the sources (comments aside: quoting AWS's own message is not a copy).
 */
const ROOT = new URL('../..', import.meta.url).pathname;
const SOURCES = ['lambdas', 'local', 'cli', 'client', 'console', 'infra', 'cdk', 'sim', 'testing', 'bench', 'agents'];
const LIMITS_FILE = 'lambdas/shared/limits.ts';

/**
 * How each limit would be written as a literal. A limit whose value is an everyday number (2048,
 * 100, 99, 40, 25, 10, 500) cannot be searched for without drowning in unrelated numbers: it is `null`,
 * and named in review instead.
 */
const SPELLINGS: Record<keyof typeof limits, readonly RegExp[] | null> = {
  LAMBDA_MAX_TIMEOUT_MS: [/\b900_?000\b/, /seconds\(\s*900\s*\)/],
  LAMBDA_ENVIRONMENT_MAX_BYTES: null, // 4096 (4 * 1024) is an everyday number of bytes
  LAMBDA_ACCOUNT_CONCURRENCY: null, // 1000: an everyday number
  LAMBDA_MIN_UNRESERVED_CONCURRENCY: null, // 100: an everyday number
  HISTORY_EVENT_LIMIT: [/\b25_?000\b/],
  PAYLOAD_LIMIT_BYTES: [/\b256\s*\*\s*1024\b/, /\b262_?144\b/],
  TASK_TOKEN_MAX_LENGTH: null,
  INLINE_MAP_MAX_CONCURRENCY: null,
  DISTRIBUTED_MAP_MAX_CONCURRENCY: null, // 10000: an everyday number (timeouts, dollars)
  DYNAMODB_ITEM_MAX_BYTES: [/\b400\s*\*\s*1024\b/, /\b409_?600\b/],
  DYNAMODB_BATCH_GET_MAX_KEYS: null,
  DYNAMODB_BATCH_GET_MAX_BYTES: [/\b16\s*\*\s*1024\s*\*\s*1024\b/, /\b16_?777_?216\b/],
  DYNAMODB_BATCH_GET_PARTITION_MAX_BYTES: null, // 1 MiB: an everyday number of bytes
  DYNAMODB_PARTITION_KEY_MAX_BYTES: null, // 2048: an everyday number
  DYNAMODB_SORT_KEY_MAX_BYTES: null, // 1024: an everyday number
  DYNAMODB_BATCH_WRITE_MAX_ITEMS: null,
  DYNAMODB_TRANSACTION_MAX_ACTIONS: null,
  DYNAMODB_TRANSACTION_MAX_BYTES: [/\b4\s*\*\s*1024\s*\*\s*1024\b/, /\b4_?194_?304\b/],
  STACK_RESOURCE_QUOTA: null,
  STACK_OUTPUT_QUOTA: null,
  STACK_PARAMETER_QUOTA: null,
  NESTED_STACK_OPERATION_RESOURCE_QUOTA: [/\b2_?500\b/],
  IAM_ROLE_INLINE_POLICIES_MAX_CHARS: [/\b10_?240\b/],
  IAM_MANAGED_POLICY_MAX_CHARS: [/\b6_?144\b/],
  SECRET_RESOURCE_POLICY_MAX_CHARS: [/\b20_?480\b/],
  API_GATEWAY_INTEGRATION_TIMEOUT_MS: [/\b29_?000\b/, /seconds\(\s*29\s*\)/],
  API_GATEWAY_STREAMING_INTEGRATION_TIMEOUT_MS: null, // 15 minutes: found by LAMBDA_MAX_TIMEOUT_MS's spellings
  EVENTBRIDGE_PUT_EVENTS_MAX_ENTRIES: null,
  EVENTBRIDGE_PUT_EVENTS_MAX_BYTES: null, // 256 KiB: found by PAYLOAD_LIMIT_BYTES's spellings
  SNS_SUBJECT_MAX_LENGTH: null,
  SNS_MESSAGE_MAX_BYTES: null, // 256 KiB: found by PAYLOAD_LIMIT_BYTES's spellings
};

/** Numbers that happen to equal one of AWS's: the file, a piece of the line that holds them, and why they are not that limit. */
const NOT_AWS_LIMITS: readonly { file: string; line: string; why: string }[] = [
  { file: 'lambdas/ledger/blobs.ts', line: 'CHUNK_BYTES =', why: "a blob chunk's size, ours, chosen to fit an item (400 KB) with its keys" },
  { file: 'lambdas/telemetry/metrics.ts', line: '[TOKEN_USAGE]:', why: "the GenAI conventions' token buckets, powers of 4 as the conventions list them" },
];

function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ' ')).replace(/\/\/.*$/gm, '');
}

const PATTERNS = Object.entries(SPELLINGS).flatMap(([name, spellings]) => (spellings ?? []).map((pattern) => ({ name, pattern })));

/** Each `file:line: …` of `text` where one of AWS's limits is written as a literal. */
function literalsIn(file: string, text: string): string[] {
  return withoutComments(text)
    .split('\n')
    .flatMap((line, index) => {
      if (NOT_AWS_LIMITS.some((exempt) => exempt.file === file && line.includes(exempt.line))) return [];
      return PATTERNS.filter(({ pattern }) => pattern.test(line)).map(({ name }) => `${file}:${index + 1}: ${name} written as a literal: ${line.trim()}`);
    });
}

describe("AWS's numbers", () => {
  it('are written only in lambdas/shared/limits.ts', () => {
    const files = sourceFiles(ROOT, SOURCES).filter((file) => file !== LIMITS_FILE);
    expect(files.length).toBeGreaterThan(200);
    expect(files.flatMap((file) => literalsIn(file, readFileSync(join(ROOT, file), 'utf8')))).toEqual([]);
  });

  it('are each spelled as the check looks for them (the check is not vacuous)', () => {
    for (const [name, spellings] of Object.entries(SPELLINGS)) {
      const value = limits[name as keyof typeof limits];
      expect(typeof value, name).toBe('number');
      for (const pattern of spellings ?? []) {
        const spelled = [String(value), value.toLocaleString('en-US').replaceAll(',', '_'), `${value / 1024} * 1024`, `${value / 1024 / 1024} * 1024 * 1024`, `seconds(${value / 1000})`];
        expect(spelled.some((text) => pattern.test(text)), `${name}: ${pattern}`).toBe(true);
      }
    }
  });

  it('are found where they are copied, and not in comments', () => {
    const found = (text: string) => literalsIn('x.ts', text);
    expect(found('export const HISTORY_EVENT_QUOTA = 25_000;')).toEqual(['x.ts:1: HISTORY_EVENT_LIMIT written as a literal: export const HISTORY_EVENT_QUOTA = 25_000;']);
    expect(found('const LAMBDA_MAX_TIMEOUT = Duration.seconds(900);')).toHaveLength(1);
    expect(found('const MAX_RUN_BODY = 256 * 1024 + 4 * 1024;')).toHaveLength(1);
    expect(literalsIn('lambdas/ledger/blobs.ts', 'export const CHUNK_BYTES = 256 * 1024;')).toEqual([]);
    expect(found("// AWS says: 'the maximum number of history events (25000)'\n/* 400 * 1024 */")).toEqual([]);
  });
});
