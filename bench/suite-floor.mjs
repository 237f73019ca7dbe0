// The floor `npm test`'s CPU is held to (bench/suite.ts): one process of a fixed amount of the work
// the suite's processes do — Node's own start, then JSON printed and parsed, SHA-256, regular
// expressions and short-lived objects — so that a machine slower at that work moves the floor and
// the suite alike. Plain JavaScript (no tsx, no import of the project's code): the floor stays the
// same while the project changes. Prints a checksum of the work, so that none of it is left out.
import { createHash } from 'node:crypto';

const ROUNDS = 600;

/** A document like the ledger's records: ~18 KB of JSON, the same every run. */
function record(index) {
  return {
    pk: `RUN#floor-${index}`,
    sk: `TURN#${String(index).padStart(6, '0')}`,
    usage: { inputTokens: 1000 + index, outputTokens: 200 + (index % 17) },
    content: Array.from({ length: 12 }, (_, part) => ({ type: 'text', text: `part ${part} of turn ${index}: ${'lorem ipsum '.repeat(8)}` })),
    tools: Array.from({ length: 6 }, (_, call) => ({ id: `call_${index}_${call}`, name: `tool_${call}`, input: { amount: call * 100 + index, currency: 'EUR', reason: 'duplicate charge' } })),
  };
}

let checksum = 0;
for (let round = 0; round < ROUNDS; round += 1) {
  const records = Array.from({ length: 8 }, (_, index) => record(round * 8 + index));
  const text = JSON.stringify(records);
  const parsed = JSON.parse(text);
  checksum += parsed.length;
  checksum += createHash('sha256').update(text).digest()[0];
  checksum += (text.match(/"call_\d+_\d+"/g) ?? []).length;
  checksum += new Map(parsed.flatMap((item) => item.tools.map((tool) => [tool.id, tool]))).size;
}
process.stdout.write(`${checksum}\n`);
