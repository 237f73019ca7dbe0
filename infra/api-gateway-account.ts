import { RemovalPolicy } from 'aws-cdk-lib';
import { CfnAccount } from 'aws-cdk-lib/aws-apigateway';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Validations } from 'aws-cdk-lib';
import { Construct, type IConstruct } from 'constructs';
import { topLevelStack } from './top-level-stack.js';

/**
 * API Gateway's CloudWatch Logs role: a setting of the whole account and region
 * (`AWS::ApiGateway::Account`), which every REST API's execution logging needs. One per app's
 * top-level stack, shared by all its agents (nested ones included), however many approval APIs
 * there are: each `cloudWatchRole: true` RestApi would set it again. Retained, like CDK's own: other
 * APIs of the account may log through it.
 */
export class ApiGatewayAccount extends Construct {
  readonly account: CfnAccount;

  /** The app's one, in the top-level stack that holds `scope`, created on first use. */
  static of(scope: IConstruct): ApiGatewayAccount {
    const stack = topLevelStack(scope);
    return (stack.node.tryFindChild(ID) as ApiGatewayAccount | undefined) ?? new ApiGatewayAccount(stack, ID);
  }

  private constructor(scope: Construct, id: string) {
    super(scope, id);
    const role = new Role(this, 'CloudWatchRole', {
      assumedBy: new ServicePrincipal('apigateway.amazonaws.com'),
      description: 'API Gateway writes the execution and access logs of this account\'s REST APIs with this role.',
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AmazonAPIGatewayPushToCloudWatchLogs')],
    });
    role.applyRemovalPolicy(RemovalPolicy.RETAIN);
    this.account = new CfnAccount(this, 'Account', { cloudWatchRoleArn: role.roleArn });
    this.account.applyRemovalPolicy(RemovalPolicy.RETAIN);
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason: "API Gateway's account-level CloudWatch Logs role must use this AWS managed policy; it lets API Gateway write the execution and access logs.",
    });
  }
}

const ID = 'ApiGatewayAccount';
