import { cachedTemplate } from '../local/template-cache.js';
import { benchStack, runOnce } from './pipeline.js';
import { dayWithSteps } from './workload.js';
const { day } = dayWithSteps(10);
const template = await cachedTemplate('refund-reconciler') as any;
const stack = await benchStack({ day, template, failRate: 0, seed: 1, worldInMemory: true, stateDir: process.argv[2], log: () => undefined });
for (let i = 0; i < Number(process.argv[3]); i++) await runOnce(stack, `r${i}`, day);
await stack.close();
