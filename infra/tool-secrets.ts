import { Token } from 'aws-cdk-lib';
import { Secret, type ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { TOOL_SECRET_NAME } from '../lambdas/tools/secrets.js';
import { secretReferenceProblem } from '../lambdas/shared/aws-names.js';

/** Tool credentials by name: a secret, or a secret's ARN or name. */
export type ToolSecretsProp = Readonly<Record<string, ISecret | string>>;

/**
 * Grants and binds in one call: CallTool, and no other function, may read each tool secret, and
 * its environment names them (`TOOL_SECRETS`: name → ARN, never a value); a tool reads one at run
 * time with `context.secret(name)` (lambdas/tools/secrets.ts). A bad name, or a secret's name or ARN
 * Secrets Manager would refuse, fails the synth, naming the agent's construct `id` and the prop.
 */
export function bindToolSecrets(scope: Construct, id: string, callTool: LambdaFunction, secrets: ToolSecretsProp | undefined): void {
  if (secrets === undefined || Object.keys(secrets).length === 0) return;
  const arns: Record<string, string> = {};
  for (const [name, given] of Object.entries(secrets)) {
    if (!TOOL_SECRET_NAME.test(name)) throw new Error(`DurableAgent ${id}: toolSecrets: ${JSON.stringify(name)} is not a tool secret name (a letter, then letters, digits or _; at most 64)`);
    const problem = typeof given === 'string' && !Token.isUnresolved(given) && secretReferenceProblem(given);
    if (problem) throw new Error(`DurableAgent ${id}: toolSecrets.${name}: ${JSON.stringify(given)} ${problem}`);
    const secret = typeof given === 'string' ? imported(scope, name, given) : given;
    secret.grantRead(callTool);
    arns[name] = secret.secretArn;
  }
  callTool.addEnvironment('TOOL_SECRETS', JSON.stringify(arns));
}

function imported(scope: Construct, name: string, given: string): ISecret {
  const id = `ToolSecret${name}`;
  if (!given.startsWith('arn:')) return Secret.fromSecretNameV2(scope, id, given);
  // A complete ARN ends in the six characters Secrets Manager adds to the name.
  return /-[A-Za-z0-9]{6}$/.test(given) ? Secret.fromSecretCompleteArn(scope, id, given) : Secret.fromSecretPartialArn(scope, id, given);
}
