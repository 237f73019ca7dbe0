import agent from '@savepoint/agent-entry';
import { lambdaHandlers } from '../adapters/aws-deps.js';
import { streamingRunEventsHandler } from '../adapters/run-events-lambda.js';

// `awslambda`: the global of Lambda's Node.js runtime (response streaming; run-events-lambda.ts).
const route = lambdaHandlers(agent).runEvents();
export const handler = streamingRunEventsHandler(awslambda, (context) => route(context.getRemainingTimeInMillis()));
