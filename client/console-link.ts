/** Where to watch an execution in the AWS console (its own module: the CLI's `runs` links to it without loading the AWS SDK). */
export function executionConsoleLink(region: string, executionArn: string): string {
  return `https://${region}.console.aws.amazon.com/states/home?region=${region}#/v2/executions/details/${executionArn}`;
}

/** The console link of an execution on AWS, its region read from its ARN (`arn:aws:states:<region>:…`). */
export function executionLinkOf(executionArn: string): string {
  const region = /^arn:aws[\w-]*:states:([a-z0-9-]+):/.exec(executionArn)?.[1];
  return region ? executionConsoleLink(region, executionArn) : executionArn;
}
