import { BedrockRuntimeServiceException } from '@aws-sdk/client-bedrock-runtime';
import { connectionError, headersOf, isContextTooLong, timedOut, retryAfterSeconds, terminal, throttled, transient, type ModelCall, type ProviderFault } from './provider-errors.js';

const CREDENTIALS = 'check the AWS credentials: on AWS the CallModel function’s role, locally the AWS_* variables or profile';
const ACCESS = 'grant bedrock:InvokeModel on this model (or inference profile) to the CallModel role and enable the model in the Bedrock console’s model access page';

/** Service exceptions that mean the model is busy or down for a while: retried, counted by the breaker. */
const THROTTLED = new Set(['ThrottlingException', 'ServiceUnavailableException', 'ServiceQuotaExceededException']);
const TRANSIENT = new Set(['InternalServerException', 'ModelNotReadyException', 'ModelTimeoutException', 'ModelErrorException', 'ModelStreamErrorException']);
/** Answers to a bad signature or key: the request never reached Bedrock proper. */
const AUTHENTICATION = new Set(['UnrecognizedClientException', 'InvalidSignatureException', 'IncompleteSignatureException', 'ExpiredTokenException', 'MissingAuthenticationTokenException', 'InvalidClientTokenId']);

/**
 * Maps what `@aws-sdk/client-bedrock-runtime` throws to a savepoint error (see provider-errors.ts).
 * Bedrock names its faults (the `x-amzn-errortype` the SDK turns into `error.name`) rather than
 * using the status alone. Documented for Converse: AccessDeniedException 403, InternalServerException
 * 500, ModelErrorException 424, ModelNotReadyException 429, ModelTimeoutException 408,
 * ResourceNotFoundException 404, ServiceUnavailableException 503, ThrottlingException 429,
 * ValidationException 400.
 */
/** `call`: where the call went and its timeout, named in a connection error or a timeout (which have no response to say more). */
export function classifyBedrockError(error: unknown, now: number = Date.now(), call: ModelCall = {}): Error {
  if (!(error instanceof Error)) return new Error(String(error));
  if (!(error instanceof BedrockRuntimeServiceException)) return clientSideError(error, call);

  const status = error.$metadata.httpStatusCode;
  const fault: ProviderFault = { provider: 'bedrock', status, code: error.name, message: error.message };
  const name = error.name;
  const headers = error.$response === undefined ? undefined : headersOf(error.$response.headers);

  if (name === 'AccessDeniedException' && /INVALID_PAYMENT_INSTRUMENT|payment|billing|subscription/i.test(error.message)) {
    return terminal(fault, 'spend_cap', 'the account cannot pay for this model: fix the AWS account’s payment method or the model’s AWS Marketplace subscription', error);
  }
  if (THROTTLED.has(name)) return throttled(fault, retryAfterSeconds(headers, now), error);
  if (TRANSIENT.has(name)) return transient(fault, error);
  if (AUTHENTICATION.has(name)) return terminal(fault, 'authentication', CREDENTIALS, error);
  if (name === 'AccessDeniedException') return terminal(fault, 'permission', ACCESS, error);
  if (name === 'ResourceNotFoundException' || /model identifier is invalid/i.test(error.message)) {
    return terminal(fault, 'not_found', 'check the model id in the model spec (bedrock:<model-id or inference profile>) and that the model is offered in the region', error);
  }
  if (name === 'ValidationException' && isContextTooLong(error.message)) {
    return terminal(fault, 'context_too_long', 'the conversation exceeds the model’s context window: lower the run’s budgets, compact the context, or choose a model with a larger window', error);
  }
  // An unmodeled exception: the fault side and the status still say whether a retry can help.
  if (error.$fault === 'server' || (status !== undefined && status >= 500)) return transient(fault, error);
  if (status === 429) return throttled(fault, retryAfterSeconds(headers, now), error);
  return terminal(fault, 'invalid_request', 'the request was refused as malformed and would be refused again: this is a bug in the adapter or the agent definition (tool schemas, message order)', error);
}

/** Faults before or around the HTTP exchange: the caller aborting, timeouts, sockets, credentials. */
function clientSideError(error: Error, call: ModelCall): Error {
  const fault: ProviderFault = { provider: 'bedrock', code: error.name, message: error.message };
  if (error.name === 'CredentialsProviderError') return terminal(fault, 'authentication', CREDENTIALS, error);
  if (error.name === 'AbortError') return transient({ ...fault, message: 'aborted by the caller' }, error);
  // The SDK stamps `$metadata` on every error it lets through; networking errors carry a code.
  const code = (error as { code?: unknown }).code;
  // The client's request handler gave up at its requestTimeout: the model timeout.
  if (error.name === 'TimeoutError') return transient({ provider: fault.provider, message: timedOut(call) }, error);
  if ('$metadata' in error || typeof code === 'string') return transient({ ...fault, message: connectionError(call, error.message) }, error);
  return error;
}
