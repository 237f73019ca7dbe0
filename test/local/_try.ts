import { fixtureEngine } from './fixture.js';
import { summarizeHistory } from '../../local/engine.js';
const t0 = Date.now();
const { engine, extracted, nextApproval } = fixtureEngine();
console.log('synth', Date.now() - t0);

console.log(extracted.tasks);
const { executionArn } = engine.startExecution({ name: 'x1', input: { id: 'x1', count: 1, failTimes: 2 } });
const ap = await nextApproval();
console.log('token', ap.token.slice(0, 20), ap.count);
engine.sendTaskSuccess(ap.token, JSON.stringify({ ok: true }));
const d = await engine.waitForExecution(executionArn);
console.log(d);
for (const e of engine.getExecutionHistory(executionArn)) console.log(e.id, e.previousEventId, e.type, JSON.stringify(Object.values(e).slice(4)).slice(0, 150));
console.log(summarizeHistory(engine.getExecutionHistory(executionArn)));
await engine.close();
