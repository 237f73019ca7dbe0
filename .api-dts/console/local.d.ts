import type { LocalStack } from '../local/runtime/local-stack.js';
import { type ConsoleOptions, type ConsoleServer } from './server.js';
/**
 * The console of a running local stack, in its process: it reads the stack's ledger and engine
 * (and the state directory's history log, for executions of earlier processes), and steers
 * through a client of the stack (decisions through the approval API, starts through the Step
 * Functions API).
 */
export declare function startLocalConsole(stack: Pick<LocalStack, 'agent' | 'engine' | 'ledger' | 'sfn' | 'stateMachineArn' | 'endpoints'>, options?: {
    stateDir?: string;
} & Pick<ConsoleOptions, 'host' | 'port' | 'token' | 'log' | 'actor' | 'clock'>): Promise<ConsoleServer>;
