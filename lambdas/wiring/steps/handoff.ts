import { createHandoff } from '../../steps/handoff.js';
import { type StepWiring } from './context.js';

export const wireHandoff: StepWiring = ({ deps }) => createHandoff({ ledger: deps.ledger, starter: deps.starter, clock: deps.clock });
