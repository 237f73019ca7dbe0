import { createExecutionStopped } from '../../steps/execution-stopped.js';
import { type StepWiring } from './context.js';

export const wireExecutionStopped: StepWiring = ({ agent, deps }) => createExecutionStopped({ ledger: deps.ledger, clock: deps.clock, callbacks: deps.callbacks, agentOf: (name) => (name === agent.name ? agent : undefined), ...(deps.children && { children: deps.children }) });
