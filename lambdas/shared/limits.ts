/**
 * AWS's numbers, written once. The harness sizes its work to them (lambdas/) and the local twin
 * refuses what AWS would refuse by them (local/); both import them from here, and
 * test/architecture/limits.test.ts fails on any of these values written anywhere else.
 * Each carries the page of AWS's documentation that states it.
 */

/**
 * The longest a Lambda invocation can run: a function's `Timeout` is 1 to 900 seconds.
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html
 */
export const LAMBDA_MAX_TIMEOUT_MS = 900_000;

/**
 * The most a Lambda function's environment variables may hold together ("Total size of environment
 * variables: 4 KB", not adjustable). Lambda measures the variables as one JSON object, names
 * included: its refusal (InvalidParameterValueException "Lambda was unable to configure your
 * environment variables because the environment variables you have provided exceeded the 4KB
 * limit. String measured: {"NAME":"value",…}") quotes the string it measured.
 * https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html
 */
export const LAMBDA_ENVIRONMENT_MAX_BYTES = 4 * 1024;

/**
 * Lambda functions running at once in one account and Region (the default quota; raised on
 * request), and what reserved concurrency must leave to the functions that reserve none: "You can
 * reserve up to the Unreserved account concurrency value minus 100".
 * https://docs.aws.amazon.com/lambda/latest/dg/lambda-concurrency.html
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html
 */
export const LAMBDA_ACCOUNT_CONCURRENCY = 1_000;
export const LAMBDA_MIN_UNRESERVED_CONCURRENCY = 100;

/**
 * Events in one Standard execution's history; the event that would pass it fails the execution
 * (`States.Runtime`: "exceeded the maximum number of history events allowed (25000)").
 * https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html#service-limits-state-machine-executions
 */
export const HISTORY_EVENT_LIMIT = 25_000;

/**
 * The largest input or output of a task, state or execution (256 KiB, UTF-8 bytes).
 * https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html#service-limits-task-executions
 */
export const PAYLOAD_LIMIT_BYTES = 256 * 1024;

/**
 * The longest task token `SendTaskSuccess`/`SendTaskFailure`/`SendTaskHeartbeat` accept.
 * https://docs.aws.amazon.com/step-functions/latest/apireference/API_SendTaskSuccess.html
 */
export const TASK_TOKEN_MAX_LENGTH = 2048;

/**
 * An inline Map state runs at most 40 iterations at once.
 * https://docs.aws.amazon.com/step-functions/latest/dg/state-map-inline.html
 */
export const INLINE_MAP_MAX_CONCURRENCY = 40;

/**
 * A distributed Map state runs each iteration as a child workflow execution with a history of its
 * own, separate from the parent's, and runs at most 10,000 of them at once ("If you don't specify,
 * Step Functions runs 10,000 parallel child workflow executions"; MaxConcurrency "can't be greater
 * than 10,000" there).
 * https://docs.aws.amazon.com/step-functions/latest/dg/state-map-distributed.html
 */
export const DISTRIBUTED_MAP_MAX_CONCURRENCY = 10_000;

/**
 * The largest DynamoDB item: 400 KB, names and values counted as DynamoDB counts them.
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-items
 */
export const DYNAMODB_ITEM_MAX_BYTES = 400 * 1024;

/**
 * Keys one `BatchGetItem` may read.
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html
 */
export const DYNAMODB_BATCH_GET_MAX_KEYS = 100;

/**
 * What one `BatchGetItem` answers at most: 16 MB in all, and 1 MB of one partition ("A single
 * operation can retrieve up to 16 MB of data [...] BatchGetItem returns a partial result if the
 * response size limit is exceeded, [...] more than 1MB per partition is requested"); the keys left
 * are answered as `UnprocessedKeys`, to be asked for again.
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html
 */
export const DYNAMODB_BATCH_GET_MAX_BYTES = 16 * 1024 * 1024;
export const DYNAMODB_BATCH_GET_PARTITION_MAX_BYTES = 1024 * 1024;

/**
 * The longest partition key and sort key values, in bytes (a string's UTF-8 bytes), of the table
 * and of its indexes' keys: "The maximum length of a partition key value is 2048 bytes", "of a
 * sort key value is 1024 bytes". DynamoDB refuses a request over them (ValidationException).
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-partition-sort-keys
 */
export const DYNAMODB_PARTITION_KEY_MAX_BYTES = 2048;
export const DYNAMODB_SORT_KEY_MAX_BYTES = 1024;

/**
 * Put and delete requests one `BatchWriteItem` may carry.
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html
 */
export const DYNAMODB_BATCH_WRITE_MAX_ITEMS = 25;

/**
 * Actions in one `TransactWriteItems`, and the bytes of all its items together (4 MB).
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html
 */
export const DYNAMODB_TRANSACTION_MAX_ACTIONS = 100;
export const DYNAMODB_TRANSACTION_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Resources one CloudFormation template may declare.
 * https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html
 */
export const STACK_RESOURCE_QUOTA = 500;

/**
 * Outputs and parameters one CloudFormation template may declare (200 each, raised from 60 in 2020).
 * https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html
 */
export const STACK_OUTPUT_QUOTA = 200;
export const STACK_PARAMETER_QUOTA = 200;

/**
 * Resources one stack operation may create, update or delete across a stack and its nested stacks:
 * "Nested stacks: Maximum number of CloudFormation resources a nested stack can create, update, or
 * delete per operation: 2,500 resources"
 * (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html).
 * A deploy of the top-level stack is one operation over the whole tree; its first deploy creates
 * every resource of every template in it (the `AWS::CloudFormation::Stack` resources included),
 * which is what savepoint checks: an update changes fewer, never more.
 */
export const NESTED_STACK_OPERATION_RESOURCE_QUOTA = 2_500;

/**
 * What IAM takes in the policies of one role: every inline policy embedded in it together ("Role
 * policy size cannot exceed 10,240 characters"; an `AWS::IAM::Policy` resource is such an inline
 * policy too), and one managed policy ("Managed policy size cannot exceed 6,144 characters"); "IAM
 * doesn't count white space when calculating the size of a policy against these quotas". IAM refuses
 * more (PutRolePolicy: `LimitExceeded`, "Maximum policy size of 10240 bytes exceeded for role …").
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html
 */
export const IAM_ROLE_INLINE_POLICIES_MAX_CHARS = 10_240;
export const IAM_MANAGED_POLICY_MAX_CHARS = 6_144;

/**
 * The longest resource policy a secret takes: PutResourcePolicy's `ResourcePolicy`, "Length
 * Constraints: Minimum length of 1. Maximum length of 20480." (whitespace included).
 * https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_PutResourcePolicy.html
 */
export const SECRET_RESOURCE_POLICY_MAX_CHARS = 20_480;

/**
 * How long an API Gateway REST API waits for its Lambda integration (29 s by default).
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html
 */
export const API_GATEWAY_INTEGRATION_TIMEOUT_MS = 29_000;

/**
 * How long a REST API's integration may be set to wait when it streams its response
 * (`ResponseTransferMode: STREAM`): "When you use response streaming, you can configure the
 * integration timeout up to 15 minutes" (API Gateway developer guide, "Set up an HTTP proxy
 * integration with payload response streaming",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/response-streaming-http.html). The
 * integration timeout still ends a stream: "If you receive the error curl: (18) transfer closed
 * with outstanding read data remaining, make sure the timeout of your integration is long enough"
 * ("Troubleshoot issues with response streaming in API Gateway",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/response-streaming-troubleshoot.html).
 */
export const API_GATEWAY_STREAMING_INTEGRATION_TIMEOUT_MS = 15 * 60_000;

/**
 * Entries one EventBridge `PutEvents` may carry, and the size all of them together must stay
 * under (each entry's Source, DetailType, Detail and Resources in UTF-8 bytes, 14 for a Time).
 * https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutEvents.html
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-putevent-size.html
 */
export const EVENTBRIDGE_PUT_EVENTS_MAX_ENTRIES = 10;
export const EVENTBRIDGE_PUT_EVENTS_MAX_BYTES = 256 * 1024;

/**
 * An SNS `Publish` subject: ASCII text that begins with a letter, number or punctuation mark, with
 * no line breaks or control characters, and less than 100 characters long; the message at most
 * 256 KB of UTF-8.
 * https://docs.aws.amazon.com/sns/latest/api/API_Publish.html
 */
export const SNS_SUBJECT_MAX_LENGTH = 99;
export const SNS_MESSAGE_MAX_BYTES = 256 * 1024;
