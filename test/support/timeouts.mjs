// `node test/support/timeouts.mjs <file>`: the tests of a SAVEPOINT_TEST_TIMEOUTS run (test/support/file-cpu.ts)
// by how much of their timeout they took, the closest first; exits 1 when one took more than a quarter of it.
import { readFileSync } from 'node:fs';

const [file] = process.argv.slice(2);
if (!file) {
  console.error('usage: node test/support/timeouts.mjs <SAVEPOINT_TEST_TIMEOUTS file>');
  process.exit(2);
}
const rows = readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line));
rows.sort((a, b) => b.ms / b.timeoutMs - a.ms / a.timeoutMs);
const over = rows.filter((row) => row.ms * 4 > row.timeoutMs);
console.log(`${rows.length} tests; ${over.length} took more than a quarter of their timeout`);
for (const row of rows.slice(0, 15)) console.log(`${(row.timeoutMs / Math.max(row.ms, 1)).toFixed(1).padStart(7)}× under  ${String(row.ms).padStart(7)} ms of ${row.timeoutMs} ms  ${row.file}: ${row.test}`);
process.exit(over.length > 0 ? 1 : 0);
