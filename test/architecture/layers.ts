import type { Layer } from './import-graph.js';

/** lambdas/, lowest rung first, one folder (or top-level file) each. A new folder of lambdas/ must be given its rung here. */
export const LAYERS: readonly Layer[] = [
  { name: 'shared', paths: ['lambdas/shared/'] },
  { name: 'records', paths: ['lambdas/records/'] },
  { name: 'ledger', paths: ['lambdas/ledger/'] },
  { name: 'models', paths: ['lambdas/models/'] },
  { name: 'define', paths: ['lambdas/define.ts'] },
  { name: 'tools', paths: ['lambdas/tools/'] },
  { name: 'conversation', paths: ['lambdas/conversation/'] },
  { name: 'guards', paths: ['lambdas/guards/'] },
  { name: 'approvals', paths: ['lambdas/approvals/'] },
  { name: 'runs', paths: ['lambdas/runs/'] },
  { name: 'telemetry', paths: ['lambdas/telemetry/'] },
  { name: 'steps', paths: ['lambdas/steps/'] },
  { name: 'wiring', paths: ['lambdas/wiring/'] },
  { name: 'adapters', paths: ['lambdas/adapters/'] },
  { name: 'handlers', paths: ['lambdas/handlers/'] },
  { name: 'the public API', paths: ['lambdas/index.ts'] },
];
