import { CfnAccount } from 'aws-cdk-lib/aws-apigateway';
import { Construct, type IConstruct } from 'constructs';
/**
 * API Gateway's CloudWatch Logs role: a setting of the whole account and region
 * (`AWS::ApiGateway::Account`), which every REST API's execution logging needs. One per app's
 * top-level stack, shared by all its agents (nested ones included), however many approval APIs
 * there are: each `cloudWatchRole: true` RestApi would set it again. Retained, like CDK's own: other
 * APIs of the account may log through it.
 */
export declare class ApiGatewayAccount extends Construct {
    readonly account: CfnAccount;
    /** The app's one, in the top-level stack that holds `scope`, created on first use. */
    static of(scope: IConstruct): ApiGatewayAccount;
    private constructor();
}
