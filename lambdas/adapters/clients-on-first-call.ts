import type { DecisionMac } from '../approvals/decision-mac.js';
import type { AwsClients } from './aws-clients.js';
import type { StepFunctionsPorts } from './sfn-clients.js';

// The clients CallTool (and BudgetCheck, CallModel) load on first use, each SDK in a chunk of its own. This module imports no
// SDK (nor adapters/aws-clients.ts, which imports them): a bundle that imports a module importing an
// SDK statically, even unused, loads the SDK at its cold start when a lazy chunk shares it (esbuild
// keeps the import).

/**
 * Step Functions with its SDK loaded on the first call (CallTool): CallTool reaches it only for a
 * child run (an agent as a tool: the child's start, the parent's wake), so an agent with none never
 * loads it, and CallTool's cold start stays within its import-CPU target. Every port is async, so
 * each method awaits the one client.
 */
export const stepFunctionsOnFirstCall = {
  stepFunctions: (traced) => {
    let loaded: Promise<StepFunctionsPorts> | undefined;
    const ports = () => (loaded ??= import('./sfn-clients.js').then(({ stepFunctions }) => stepFunctions.stepFunctions(traced)));
    return {
      callbacks: { succeed: async (token, output) => (await ports()).callbacks.succeed(token, output), fail: async (token, error, cause) => (await ports()).callbacks.fail(token, error, cause) },
      executions: { isRunning: async (arn) => (await ports()).executions.isRunning(arn), stop: async (arn, error, cause) => (await ports()).executions.stop(arn, error, cause) },
      lookup: { describe: async (arn) => (await ports()).lookup.describe(arn) },
      starter: (arn) => ({ start: async (name, input, options) => (await ports()).starter(arn).start(name, input, options) }),
      versions: (arn) => ({
        list: async () => (await ports()).versions(arn).list(),
        aliased: async () => (await ports()).versions(arn).aliased(),
        activity: async (version) => (await ports()).versions(arn).activity(version),
        delete: async (version) => (await ports()).versions(arn).delete(version),
        definition: async (version) => (await ports()).versions(arn).definition(version),
      }),
      batches: (arn) => ({ start: async (batch) => (await ports()).batches(arn).start(batch), get: async (batchId) => (await ports()).batches(arn).get(batchId) }),
    };
  },
} satisfies AwsClients;

/**
 * The decision key (`DECISION_KEY_ID`) with KMS's SDK loaded on the first MAC (CallTool, and
 * BudgetCheck and CallModel deciding: a decision is verified only when an approved call runs, or an approved budget
 * extension applies), so a cold start does not load it. Both methods are
 * async, so each awaits the one key.
 */
export const decisionKeyOnFirstCall = {
  decisionMac: (keyId, previous) => {
    let loaded: Promise<DecisionMac> | undefined;
    const mac = () => (loaded ??= import('./kms-decision-mac.js').then(({ kmsKeyMac }) => kmsKeyMac(keyId, previous)));
    return { keyName: keyId, sign: async (message) => (await mac()).sign(message), verify: async (message, given) => (await mac()).verify(message, given) };
  },
} satisfies AwsClients;
