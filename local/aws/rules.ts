/**
 * AWS's rules the local twin enforces, one row each: what AWS does, the page of AWS's
 * documentation that says so, the file of local/aws/ that holds the rule (the page is linked at its
 * top), the test that fails when the twin breaks it, and what AWS answers when the rule refuses
 * (the error code, or for a bound that refuses nothing the field it bounds), which both the file and
 * the test name. A new rule is a file here, a row, and its test: test/local/aws-rules.test.ts holds
 * the table, the files and the tests to each other.
 */
export interface AwsRule {
  /** What AWS does, in a sentence. */
  readonly rule: string;
  /** The page of AWS's documentation that states it. */
  readonly doc: string;
  /** The file that holds it (repository-relative, under local/aws/). */
  readonly file: string;
  /** The test that holds the twin to it (repository-relative). */
  readonly test: string;
  /** What AWS answers when the rule refuses, or the field a bound bounds: named by the file and by the test. */
  readonly answer: string;
}

const SFN_GUIDE = 'https://docs.aws.amazon.com/step-functions/latest/dg';
const SFN_API = 'https://docs.aws.amazon.com/step-functions/latest/apireference';

export const AWS_RULES: readonly AwsRule[] = [
  {
    rule: 'Step Functions throttles its API per account with a token bucket per action',
    doc: `${SFN_GUIDE}/service-quotas.html`,
    file: 'local/aws/sfn-api-throttling.ts',
    test: 'test/local/quotas.test.ts',
    answer: 'ThrottlingException',
  },
  {
    rule: "A state's output, a task's input or its result is at most 256 KiB, else the execution fails",
    doc: `${SFN_GUIDE}/service-quotas.html#service-limits-task-executions`,
    file: 'local/aws/sfn-payload-limit.ts',
    test: 'test/local/payload-limits.test.ts',
    answer: 'States.DataLimitExceeded',
  },
  {
    rule: "A Standard execution's history holds at most 25,000 events; only its success may be the last",
    doc: `${SFN_GUIDE}/bp-history-limit.html`,
    file: 'local/aws/sfn-history-limit.ts',
    test: 'test/local/history-quota.test.ts',
    answer: 'States.Runtime',
  },
  {
    rule: "An execution's name is 1 to 80 characters without whitespace, brackets, wildcards or URL-special characters",
    doc: `${SFN_API}/API_StartExecution.html`,
    file: 'local/aws/sfn-start-execution.ts',
    test: 'test/local/sfn-api-rules.test.ts',
    answer: 'InvalidName',
  },
  {
    rule: "An execution's input is a JSON object of at most 256 KiB",
    doc: `${SFN_API}/API_StartExecution.html`,
    file: 'local/aws/sfn-start-execution.ts',
    test: 'test/local/sfn-api-rules.test.ts',
    answer: 'InvalidExecutionInput',
  },
  {
    rule: 'StartExecution is idempotent for a running execution of the same name and input; otherwise a name is taken',
    doc: `${SFN_API}/API_StartExecution.html`,
    file: 'local/aws/sfn-start-execution.ts',
    test: 'test/local/engine.test.ts',
    answer: 'ExecutionAlreadyExists',
  },
  {
    rule: 'A task token is 1 to 2,048 characters',
    doc: `${SFN_API}/API_SendTaskSuccess.html`,
    file: 'local/aws/sfn-task-tokens.ts',
    test: 'test/local/sfn-api-rules.test.ts',
    answer: 'InvalidToken',
  },
  {
    rule: "A callback's output is JSON of at most 256 KiB",
    doc: `${SFN_API}/API_SendTaskSuccess.html`,
    file: 'local/aws/sfn-task-tokens.ts',
    test: 'test/local/sfn-api-rules.test.ts',
    answer: 'InvalidOutput',
  },
  {
    rule: 'A callback on the token of a Task that timed out is refused as such',
    doc: `${SFN_API}/API_SendTaskSuccess.html`,
    file: 'local/aws/sfn-task-tokens.ts',
    test: 'test/local/timeouts.test.ts',
    answer: 'TaskTimedOut',
  },
  {
    rule: 'An inline Map runs at most 40 iterations at once, whatever its MaxConcurrency',
    doc: `${SFN_GUIDE}/state-map-inline.html`,
    file: 'local/aws/sfn-inline-map.ts',
    test: 'test/local/map.test.ts',
    answer: 'MaxConcurrency',
  },
  {
    rule: 'A distributed Map runs each iteration as a child execution with a history of its own, at most 10,000 at once (10,000 when it names no limit)',
    doc: `${SFN_GUIDE}/state-map-distributed.html`,
    file: 'local/aws/sfn-distributed-map.ts',
    test: 'test/local/distributed-map.test.ts',
    answer: 'MaxConcurrency',
  },
  {
    rule: "A distributed Map starts each child execution as the state machine's role (states:StartExecution on the state machine itself); refused, it starts none and the execution fails",
    doc: `${SFN_GUIDE}/iam-policies-eg-dist-map.html`,
    file: 'local/aws/sfn-distributed-map.ts',
    test: 'test/engine/batch-iam.test.ts',
    answer: 'States.Runtime',
  },
  {
    rule: 'A distributed Map Run fails when its failed items exceed ToleratedFailureCount or ToleratedFailurePercentage (0% when it names neither); failures below the threshold are tolerated',
    doc: `${SFN_GUIDE}/maprun-fail-threshold.html`,
    file: 'local/aws/sfn-distributed-map.ts',
    test: 'test/local/distributed-map.test.ts',
    answer: 'States.ExceedToleratedFailureThreshold',
  },
  {
    rule: "A distributed Map's ItemReader reads a JSON array or a CSV file with s3:getObject, and a read that fails fails the Map",
    doc: `${SFN_GUIDE}/input-output-itemreader.html`,
    file: 'local/aws/sfn-item-reader.ts',
    test: 'test/engine/batch-manifest.test.ts',
    answer: 'States.ItemReaderFailed',
  },
  {
    rule: "S3 GetObject and PutObject are authorized on the object's ARN, and a missing key is NoSuchKey",
    doc: 'https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazons3.html',
    file: 'local/aws/s3-objects.ts',
    test: 'test/engine/batch-manifest.test.ts',
    answer: 'AccessDenied',
  },
  {
    rule: 'A state machine version an alias routes to is not deleted',
    doc: `${SFN_API}/API_DeleteStateMachineVersion.html`,
    file: 'local/aws/state-machine-versions.ts',
    test: 'test/versions/prune.test.ts',
    answer: 'ConflictException',
  },
  {
    rule: 'An invoke of a Lambda version that is not there (deleted) is refused, and a Task reports it as Lambda.ResourceNotFoundException',
    doc: 'https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html',
    file: 'local/aws/lambda-versions.ts',
    test: 'test/versions/prune.test.ts',
    answer: 'ResourceNotFoundException',
  },
  {
    rule: 'DeleteFunction with a Qualifier deletes that version only, and never $LATEST',
    doc: 'https://docs.aws.amazon.com/lambda/latest/api/API_DeleteFunction.html',
    file: 'local/aws/lambda-versions.ts',
    test: 'test/versions/prune.test.ts',
    answer: 'InvalidParameterValueException',
  },
  {
    rule: "Lambda authorizes a call on a function with the function's tags as aws:ResourceTag/<key> (attribute-based access control)",
    doc: 'https://docs.aws.amazon.com/lambda/latest/dg/attribute-based-access-control.html',
    file: 'local/aws/iam/services.ts',
    test: 'test/versions/prune.test.ts',
    answer: 'AccessDeniedException',
  },
  {
    rule: 'A DynamoDB item is at most 400 KB, names and values counted as DynamoDB counts them',
    doc: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-items',
    file: 'local/aws/dynamodb-item-size.ts',
    test: 'test/local/item-limit.test.ts',
    answer: 'ValidationException',
  },
  {
    rule: "A DynamoDB partition key value is at most 2048 bytes and a sort key value at most 1024, a string counted in UTF-8 bytes, the table's keys and its indexes' alike",
    doc: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-partition-sort-keys',
    file: 'local/aws/dynamodb-key-size.ts',
    test: 'test/local/dynamo-request-rules.test.ts',
    answer: 'ValidationException',
  },
  {
    rule: 'A BatchGetItem answers at most 16 MB, and at most 1 MB of one partition: the keys left are answered as UnprocessedKeys; more than 100 keys, or one twice, are refused',
    doc: 'https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html',
    file: 'local/aws/dynamodb-batch-get.ts',
    test: 'test/local/dynamo-request-rules.test.ts',
    answer: 'UnprocessedKeys',
  },
  {
    rule: "Every DynamoDB answer carries the request's id (x-amzn-RequestId) and the CRC32 of its body (x-amz-crc32), refusals too",
    doc: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.LowLevelAPI.html',
    file: 'local/aws/dynamodb-reply.ts',
    test: 'test/local/dynamo-request-rules.test.ts',
    answer: 'x-amz-crc32',
  },
  {
    rule: 'A TransactWriteItems checks every condition before it writes, and a failed one cancels all, reason by reason',
    doc: 'https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html',
    file: 'local/aws/dynamodb-transactions.ts',
    test: 'test/local/dynamo-transactions.test.ts',
    answer: 'TransactionCanceledException',
  },
  {
    rule: 'A write of an item a transaction holds is rejected, not queued',
    doc: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling',
    file: 'local/aws/dynamodb-transactions.ts',
    test: 'test/local/dynamo-transactions.test.ts',
    answer: 'TransactionConflictException',
  },
  {
    rule: 'A TransactWriteItems sent again with its ClientRequestToken within 10 minutes of its success succeeds without being applied again; with other parameters it is refused',
    doc: 'https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html',
    file: 'local/aws/dynamodb-transactions.ts',
    test: 'test/local/dynamo-lost-answers.test.ts',
    answer: 'IdempotentParameterMismatchException',
  },
  {
    rule: 'A DynamoDB write may commit and still be answered 500 InternalServerError, or lose its answer with the connection (off by default: the local stack option dynamoDbLostAnswers); the SDK retries it',
    doc: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html',
    file: 'local/aws/dynamodb-lost-answers.ts',
    test: 'test/local/dynamo-lost-answers.test.ts',
    answer: 'InternalServerError',
  },
  {
    rule: "SNS refuses a Publish whose Subject is not one printable ASCII line under 100 characters, or whose Message is empty or over 256 KB",
    doc: 'https://docs.aws.amazon.com/sns/latest/api/API_Publish.html',
    file: 'local/aws/notification-requests.ts',
    test: 'test/local/notification-requests.test.ts',
    answer: 'InvalidParameterException',
  },
  {
    rule: 'EventBridge refuses a PutEvents of no entries, more than 10, or over 256 KB, and an entry whose Detail is not a JSON object',
    doc: 'https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutEvents.html',
    file: 'local/aws/notification-requests.ts',
    test: 'test/local/notification-requests.test.ts',
    answer: 'MalformedDetail',
  },
  {
    rule: 'An EventBridge rule matches an event by its pattern: every field named, a value among the exact ones listed or starting with a `prefix`',
    doc: 'https://docs.aws.amazon.com/eventbridge/latest/userguide/content-filtering-with-event-patterns.html',
    file: 'local/aws/event-bus.ts',
    test: 'test/local/event-rules.test.ts',
    answer: 'InvalidEventPatternException',
  },
  {
    rule: 'An event pattern is at most 2,048 characters (the default quota, adjustable to 4,096)',
    doc: 'https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-quota.html',
    file: 'local/aws/event-bus.ts',
    test: 'test/local/event-rules.test.ts',
    answer: 'InvalidEventPatternException',
  },
  {
    rule: "EventBridge delivers a rule's event to its target at least once; a Lambda function invoked asynchronously may receive one event more than once",
    doc: 'https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-troubleshooting.html',
    file: 'local/aws/event-delivery.ts',
    test: 'test/local/status-change-duplicates.test.ts',
    answer: 'statusChangeDeliveries',
  },
  {
    rule: 'A CloudFormation template declares at most 500 resources',
    doc: 'https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html',
    file: 'local/aws/cloudformation-template.ts',
    test: 'test/local/stack-quota.test.ts',
    answer: 'ValidationError',
  },
  {
    rule: "A state machine's name is 1 to 80 characters",
    doc: 'https://docs.aws.amazon.com/step-functions/latest/apireference/API_CreateStateMachine.html',
    file: 'local/aws/cloudformation-template.ts',
    test: 'test/infra/template-quotas.test.ts',
    answer: 'ValidationError',
  },
  {
    rule: "An EventBridge rule's schedule expression is rate(n unit), singular for 1, or a six-field cron with ? in one day field",
    doc: 'https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-scheduled-rule-pattern.html',
    file: 'local/aws/cloudformation-template.ts',
    test: 'test/infra/template-quotas.test.ts',
    answer: 'ValidationError',
  },
  {
    rule: "A synchronous Lambda invocation's response is at most 6 MB: over it the invocation fails, and API Gateway's proxy integration answers 502",
    doc: 'https://docs.aws.amazon.com/lambda/latest/dg/API_Invoke.html',
    file: 'local/aws/lambda-response-size.ts',
    test: 'test/local/lambda-response-size.test.ts',
    answer: 'Function.ResponseSizeTooLarge',
  },
  {
    rule: "A Lambda function's Timeout is whole seconds from 1 to 900 (3 when unset)",
    doc: 'https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html',
    file: 'local/aws/lambda-function-timeout.ts',
    test: 'test/local/stack-quota.test.ts',
    answer: 'Timeout',
  },
  {
    rule: 'API Gateway ends a streamed response (responseTransferMode STREAM) after 15 minutes',
    doc: 'https://docs.aws.amazon.com/apigateway/latest/developerguide/response-transfer-mode.html',
    file: 'local/aws/api-gateway-streaming.ts',
    test: 'test/local/run-events-streaming.test.ts',
    answer: 'maxDurationMs',
  },
  {
    rule: 'API Gateway ends a streamed response idle for 5 minutes (regional, private) or 30 seconds (edge-optimized)',
    doc: 'https://docs.aws.amazon.com/apigateway/latest/developerguide/response-transfer-mode.html',
    file: 'local/aws/api-gateway-streaming.ts',
    test: 'test/local/run-events-streaming.test.ts',
    answer: 'idleTimeoutMs',
  },
  {
    rule: 'An API Gateway integration waits 50 ms to 29 s, or up to 15 minutes for a streamed response, whose stream it ends there',
    doc: 'https://docs.aws.amazon.com/apigateway/latest/developerguide/response-streaming-http.html',
    file: 'local/aws/api-gateway-integration-timeout.ts',
    test: 'test/local/stack-quota.test.ts',
    answer: 'Integration.TimeoutInMillis',
  },
  {
    rule: "A Lambda function's streamed response is at most 200 MB",
    doc: 'https://docs.aws.amazon.com/lambda/latest/dg/configuration-response-streaming.html',
    file: 'local/aws/api-gateway-streaming.ts',
    test: 'test/local/run-events-streaming.test.ts',
    answer: 'maxBytes',
  },
  {
    rule: "A Lambda function's environment variables measure at most 4 KB together, as one JSON object",
    doc: 'https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html',
    file: 'local/aws/lambda-environment-size.ts',
    test: 'test/local/stack-quota.test.ts',
    answer: 'InvalidParameterValueException',
  },
  {
    rule: "An invoke past the account's Lambda concurrency or the function's reservation is throttled",
    doc: 'https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html',
    file: 'local/aws/lambda-concurrency.ts',
    test: 'test/local/lambda-concurrency.test.ts',
    answer: 'TooManyRequestsException',
  },
  {
    rule: 'Reserved concurrency leaves at least 100 of the account to the functions that reserve none',
    doc: 'https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html',
    file: 'local/aws/lambda-concurrency.ts',
    test: 'test/local/lambda-concurrency.test.ts',
    answer: 'InvalidParameterValueException',
  },
  {
    rule: 'IAM allows a request an identity policy allows and none denies (an explicit Deny wins; nothing else allows)',
    doc: 'https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html',
    file: 'local/aws/iam/policy.ts',
    test: 'test/local/iam-oracle.test.ts',
    answer: 'Deny',
  },
  {
    rule: "Step Functions authorizes a call on a version or alias against the state machine's ARN, with the qualifier as a condition key",
    doc: `${SFN_GUIDE}/auth-version-alias.html`,
    file: 'local/aws/iam/step-functions.ts',
    test: 'test/unit/iam-policy.test.ts',
    answer: 'states:StateMachineQualifier',
  },
  {
    rule: "DynamoDB authorizes each request on the table (or index) with the partitions it touches as dynamodb:LeadingKeys",
    doc: 'https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazondynamodb.html',
    file: 'local/aws/iam/dynamodb.ts',
    test: 'test/local/iam-ledger.test.ts',
    answer: 'dynamodb:LeadingKeys',
  },
  {
    rule: "Secrets Manager, KMS, EventBridge and SNS authorize a function's call on the resource it names (SNS words its refusal AuthorizationError)",
    doc: 'https://docs.aws.amazon.com/service-authorization/latest/reference/reference_policies_actions-resources-contextkeys.html',
    file: 'local/aws/iam/services.ts',
    test: 'test/local/iam-services.test.ts',
    answer: 'AccessDeniedException',
  },
  {
    rule: "A Task's invoke is authorized as the state machine's role: lambda:InvokeFunction on the function it invokes",
    doc: 'https://docs.aws.amazon.com/service-authorization/latest/reference/list_awslambda.html',
    file: 'local/aws/iam/index.ts',
    test: 'test/local/iam-enforcement.test.ts',
    answer: 'lambda:InvokeFunction',
  },
  {
    rule: "API Gateway admits an IAM-authenticated request its resource policy or the caller's IAM allows (both, from another account) and neither denies; an open route only on the resource policy's explicit Allow",
    doc: 'https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-authorization-flow.html',
    file: 'local/aws/iam/api-gateway.ts',
    test: 'test/infra/approval-api-policy.test.ts',
    answer: 'with an explicit deny',
  },
  {
    rule: "A KMS key is used only on its key policy's Allow (directly, or delegated to IAM and allowed by the role's policy); a secret is read on the role's or the secret's own Allow; an explicit Deny in either refuses",
    doc: 'https://docs.aws.amazon.com/kms/latest/developerguide/key-policies.html',
    file: 'local/aws/iam/resource-policies.ts',
    test: 'test/local/iam-services.test.ts',
    answer: 'AccessDeniedException',
  },
];

/** The files of local/aws/ that hold no rule of their own, and what they are instead. */
export const AWS_RULE_SUPPORT: Readonly<Record<string, string>> = {
  'local/aws/rules.ts': 'this table',
  'local/aws/sfn-error.ts': "the shape of Step Functions' refusals, which its rules throw",
  'local/aws/client-error.ts': "the shape of the other services' refusals (a client fault, 4xx), which their rules throw",
  'local/aws/iam/authorizer.ts': "the twin's IAM decisions, counted, against each role's policies",
  'local/aws/iam/credentials.ts': "each role's own access keys, by which a call's caller is known",
  'local/aws/iam/deployment.ts': 'the physical ids a deployment gives the template, which policies name',
  'local/aws/iam/roles.ts': "the template's roles and their identity policies",
};
