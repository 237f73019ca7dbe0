export declare const handler: import("@middy/core").MiddyfiedHandler<unknown, unknown, Error, import("aws-lambda").Context, {}>;
