// `node test/support/timeouts.mjs <file>`: the tests of a SAVEPOINT_TEST_TIMEOUTS run (test/support/file-cpu.ts)
// by how much of their timeout they took, the closest first; exits 1 when one took more than a quarter of it.
// With --cpu, by the CPU each took instead (test/support/file-cpu.ts).
import { readFileSync } from 'node:fs';

const [file, by] = process.argv.slice(2);
if (!file || (by !== undefined && by !== '--cpu')) {
  console.error('usage: node test/support/timeouts.mjs <SAVEPOINT_TEST_TIMEOUTS file> [--cpu]');
  process.exit(2);
}
const rows = readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line));
// --cpu: the tests that cost the most CPU (their worker's and their processes'), the costliest first.
if (by === '--cpu') {
  const cpu = (row) => (row.self ?? 0) + (row.children ?? 0);
  rows.sort((a, b) => cpu(b) - cpu(a));
  const total = rows.reduce((sum, row) => sum + cpu(row), 0);
  console.log(`${rows.length} tests, ${total.toFixed(1)} s of CPU in their bodies (self + children)`);
  for (const row of rows.slice(0, 30)) console.log(`${cpu(row).toFixed(1).padStart(6)} s  (${row.children.toFixed(1)} children)  ${row.file}: ${row.test}`);
  process.exit(0);
}
rows.sort((a, b) => b.ms / b.timeoutMs - a.ms / a.timeoutMs);
const over = rows.filter((row) => row.ms * 4 > row.timeoutMs);
console.log(`${rows.length} tests; ${over.length} took more than a quarter of their timeout`);
for (const row of rows.slice(0, 15)) console.log(`${(row.timeoutMs / Math.max(row.ms, 1)).toFixed(1).padStart(7)}× under  ${String(row.ms).padStart(7)} ms of ${row.timeoutMs} ms  ${row.file}: ${row.test}`);
process.exit(over.length > 0 ? 1 : 0);
