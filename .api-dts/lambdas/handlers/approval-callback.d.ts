export declare const handler: import("@middy/core").MiddyfiedHandler<import("aws-lambda").APIGatewayProxyEvent, import("aws-lambda").APIGatewayProxyResult, Error, import("aws-lambda").Context, {}>;
