import type { Layer } from './import-graph.js';

/**
 * lambdas/, lowest rung first, one folder (or top-level file) each; a top-level file may keep its
 * parts in a folder of its name beside it (`define.ts`, the entry, and `define/`). A new folder of
 * lambdas/ must be given its rung here. README's Layout lists these rungs (test/readme/layout.test.ts).
 */
export const LAYERS: readonly Layer[] = [
  { name: 'shared', paths: ['lambdas/shared/'] },
  { name: 'records', paths: ['lambdas/records/'] },
  { name: 'ledger', paths: ['lambdas/ledger/'] },
  { name: 'models', paths: ['lambdas/models/'] },
  { name: 'define', paths: ['lambdas/define.ts', 'lambdas/define/'] },
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
