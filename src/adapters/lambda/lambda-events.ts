/**
 * The HTTP events AWS Lambda is invoked with, and the results each expects, as AWS documents them
 * (written here rather than taken from `@types/aws-lambda`, so that the package adds no dependency;
 * that package's event types are assignable to these). Only the fields the webhook reads or answers
 * with are required; a few others are named for context.
 */

/** Header values as API Gateway and an ALB give them: one value per name. */
export type LambdaHeaders = Readonly<Record<string, string | undefined>>;

/** Header values as API Gateway and an ALB with multi-value headers give them: every value, in order. */
export type LambdaMultiValueHeaders = Readonly<Record<string, readonly string[] | undefined>>;

/**
 * An API Gateway REST API proxy event (payload format 1.0; an HTTP API sends the same with
 * `version: '1.0'`). `headers` keeps the last value of a repeated header, `multiValueHeaders` all.
 */
export interface ApiGatewayProxyEvent {
  readonly version?: '1.0';
  readonly resource?: string;
  /** The request path, without the stage. */
  readonly path: string;
  readonly httpMethod: string;
  readonly headers: LambdaHeaders | null;
  readonly multiValueHeaders?: LambdaMultiValueHeaders | null;
  readonly queryStringParameters?: LambdaHeaders | null;
  readonly multiValueQueryStringParameters?: LambdaMultiValueHeaders | null;
  readonly pathParameters?: LambdaHeaders | null;
  readonly stageVariables?: LambdaHeaders | null;
  readonly requestContext: { readonly requestId?: string; readonly stage?: string };
  /** The body as text, or base64 when `isBase64Encoded`; null without one. */
  readonly body: string | null;
  readonly isBase64Encoded: boolean;
}

/** What API Gateway takes back from a payload 1.0 function. */
export interface ApiGatewayProxyResult {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly isBase64Encoded: false;
}

/**
 * An API Gateway HTTP API event (payload format 2.0), which is also what a Lambda Function URL
 * sends: header names in lower case, a repeated header's values joined with commas, cookies apart.
 */
export interface ApiGatewayProxyEventV2 {
  /** `'2.0'`. */
  readonly version: string;
  readonly routeKey?: string;
  /** The request path; with a named stage, the stage is its first segment. */
  readonly rawPath: string;
  readonly rawQueryString?: string;
  readonly cookies?: readonly string[];
  readonly headers?: LambdaHeaders;
  readonly queryStringParameters?: LambdaHeaders;
  readonly pathParameters?: LambdaHeaders;
  readonly stageVariables?: LambdaHeaders;
  readonly requestContext: {
    readonly http: { readonly method: string; readonly path?: string; readonly protocol?: string; readonly sourceIp?: string; readonly userAgent?: string };
    readonly requestId?: string;
    readonly domainName?: string;
  };
  /** The body as text, or base64 when `isBase64Encoded`; absent without one. */
  readonly body?: string;
  readonly isBase64Encoded: boolean;
}

/** A Lambda Function URL's event: the HTTP API's payload format 2.0. */
export type LambdaFunctionUrlEvent = ApiGatewayProxyEventV2;

/** What an HTTP API (payload 2.0) or a Function URL takes back. */
export interface ApiGatewayProxyResultV2 {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly isBase64Encoded: false;
}

/**
 * An Application Load Balancer's event for a Lambda target. With multi-value headers turned on for
 * the target group it carries `multiValueHeaders` (and expects them back), else `headers`.
 */
export interface AlbEvent {
  readonly requestContext: { readonly elb: { readonly targetGroupArn?: string } };
  readonly httpMethod: string;
  readonly path: string;
  readonly queryStringParameters?: LambdaHeaders;
  readonly multiValueQueryStringParameters?: LambdaMultiValueHeaders;
  readonly headers?: LambdaHeaders;
  readonly multiValueHeaders?: LambdaMultiValueHeaders;
  /** The body as text, or base64 when `isBase64Encoded`; empty or null without one. */
  readonly body: string | null;
  readonly isBase64Encoded: boolean;
}

/** What an ALB takes back: `multiValueHeaders` when the event had them, else `headers`. */
export interface AlbResult {
  readonly statusCode: number;
  /** The status line's text, such as `200 OK`. */
  readonly statusDescription: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly multiValueHeaders?: Readonly<Record<string, string[]>>;
  readonly body: string;
  readonly isBase64Encoded: false;
}

/** Every HTTP event `createLambdaHandler` takes. */
export type LambdaHttpEvent = ApiGatewayProxyEvent | ApiGatewayProxyEventV2 | AlbEvent;

/** Every result `createLambdaHandler` answers with. */
export type LambdaHttpResult = ApiGatewayProxyResult | ApiGatewayProxyResultV2 | AlbResult;

/**
 * A Lambda function's handler for HTTP events: each event is answered in its own shape. An event of
 * another shape (a queue's, a schedule's, a body already parsed) is answered 500
 * `unsupported_event`, and the webhook logs which shape it was.
 */
export interface LambdaHandler {
  (event: AlbEvent): Promise<AlbResult>;
  (event: ApiGatewayProxyEventV2): Promise<ApiGatewayProxyResultV2>;
  (event: ApiGatewayProxyEvent): Promise<ApiGatewayProxyResult>;
  (event: LambdaHttpEvent): Promise<LambdaHttpResult>;
}
