/**
 * One row of `npm run bench -- --overhead`, in a process of its own (so that its peak RSS is its
 * own): measures the row the JSON job names and prints the result as one JSON line on stdout;
 * progress goes to stderr.
 */
import { measureRow, type RowJob } from './overhead.js';

const job = JSON.parse(process.argv[2] ?? '{}') as RowJob;
const result = await measureRow(job, (line) => process.stderr.write(`${line}\n`));
process.stdout.write(`${JSON.stringify(result)}\n`);
