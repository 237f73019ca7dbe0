import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import { z } from 'zod';
import { HttpMessagesClient } from '../agent/messages-client.js';
import { HttpCommerceApi } from '../agent/payments-client.js';
import { CircuitBreaker } from '../guards/breaker.js';
import { DynamoDbLedger } from '../ledger/dynamodb-ledger.js';
import { systemClock } from '../steps/ports.js';
import { parseOrThrow } from '../shared/validation.js';
import { sfnExecutions, sfnStarter, sfnTaskCallbacks } from './sfn.js';

/**
 * The environment of the step functions on AWS, parsed once per cold start: a missing or malformed
 * variable fails the cold start with its name. infra/ sets the same variables.
 */
export const StepEnvironment = z.object({
  TABLE_NAME: z.string().min(3),
  MODEL_API_URL: z.url(),
  MODEL_API_KEY: z.string().min(1),
  PAYMENTS_API_URL: z.url(),
  CODE_VERSION: z.string().min(1),
  /** At least the Lambda timeout: a claim must outlive the invocation that took it. */
  TOOL_LEASE_MS: z.coerce.number().int().positive(),
  /** The agent state machine, for the recovery function to start executions of. */
  STATE_MACHINE_ARN: z.string().startsWith('arn:'),
  /** Recoveries in a row without progress before a run is given up. */
  MAX_RECOVERIES: z.coerce.number().int().positive().max(20),
});
export type StepEnvironment = z.infer<typeof StepEnvironment>;

/** One set of clients per container, shared by every invocation. */
export function awsDeps(env: NodeJS.ProcessEnv = process.env) {
  const config = parseOrThrow(StepEnvironment.partial(), env, 'Lambda environment');
  const require = <K extends keyof StepEnvironment>(name: K): StepEnvironment[K] => {
    const value = config[name];
    if (value === undefined) throw new Error(`invalid Lambda environment: ${name}: required`);
    return value as StepEnvironment[K];
  };
  const sfn = new SFNClient({});
  const ledger = () => new DynamoDbLedger(new DynamoDBClient({}), require('TABLE_NAME'));
  return {
    ledger,
    breaker: () => new CircuitBreaker(ledger(), systemClock),
    model: () => new HttpMessagesClient({ baseUrl: require('MODEL_API_URL'), apiKey: require('MODEL_API_KEY') }),
    api: () => new HttpCommerceApi({ baseUrl: require('PAYMENTS_API_URL') }),
    callbacks: () => sfnTaskCallbacks(sfn),
    executions: () => sfnExecutions(sfn),
    codeVersion: () => require('CODE_VERSION'),
    leaseMs: () => require('TOOL_LEASE_MS'),
    starter: () => sfnStarter(sfn, require('STATE_MACHINE_ARN')),
    recoveryPolicy: () => ({ maxWithoutProgress: require('MAX_RECOVERIES') }),
    clock: systemClock,
  };
}
