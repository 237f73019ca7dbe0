import { createFinalize } from '../../steps/finalize.js';
import { type StepWiring } from './context.js';

export const wireFinalize: StepWiring = ({ agent, deps }) => createFinalize({ ledger: deps.ledger, clock: deps.clock, agent });
