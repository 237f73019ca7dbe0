import agents from '@savepoint/agents-entry';
import { stackApiHandlers } from '../adapters/stack-api.js';
import { streamingRunEventsHandler } from '../adapters/run-events-lambda.js';

// `awslambda`: the global of Lambda's Node.js runtime (response streaming; run-events-lambda.ts).
const route = stackApiHandlers(agents).runEvents();
export const handler = streamingRunEventsHandler(awslambda, (context) => route(context.getRemainingTimeInMillis()));
