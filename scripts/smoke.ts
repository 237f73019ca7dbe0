import { readFileSync } from 'node:fs';
import { Day } from '../lambdas/agent/domain.js';
import { startLocalStack } from '../local/runtime.js';
import { summarizeHistory } from '../local/engine.js';
import { loadReport } from '../lambdas/agent/report.js';

const day = Day.parse(JSON.parse(readFileSync('events/sample-day.json', 'utf8')));
const t0 = Date.now();
const stack = await startLocalStack({ day, failRate: Number(process.argv[2] ?? 0), onApproval: (a) => console.log('approval', a.approvalId, a.summary) });
console.log('started in', Date.now() - t0, 'ms');
const { executionArn } = stack.engine.startExecution({ name: 'smoke', input: { runDate: day.date, config: { approvalTimeoutSeconds: 1 } } });
const result = await stack.engine.waitForExecution(executionArn);
console.log(result.status, result.output, result.error, result.cause);
console.log(JSON.stringify(summarizeHistory(stack.engine.getExecutionHistory(executionArn).events ?? stack.engine.getExecutionHistory(executionArn) as never)));
console.log(JSON.stringify(await loadReport(stack.ledger, 'refunds-' + day.date, new Date()), null, 1));
console.log('payments', stack.payments.refunds().length, 'in', Date.now() - t0, 'ms');
await stack.close();
