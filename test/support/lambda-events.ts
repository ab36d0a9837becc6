/**
 * The HTTP events AWS Lambda is invoked with, built as AWS documents them (the examples of the API
 * Gateway, Function URL and ALB guides), around one signed delivery.
 */
import type { AlbEvent, ApiGatewayProxyEvent, ApiGatewayProxyEventV2 } from '../../src';
import type { SignedDelivery } from '../../src/testing';

/** The four shapes, and an ALB whose target group has multi-value headers turned on. */
export type EventShape = 'rest' | 'http' | 'url' | 'alb' | 'alb-multi';
export const EVENT_SHAPES: readonly EventShape[] = ['rest', 'http', 'url', 'alb', 'alb-multi'];

export interface EventOptions {
  /** Send the body base64-encoded, as API Gateway does for a binary media type and a Function URL may. */
  readonly base64?: boolean;
  /** Every value of each header; a name given two values was sent twice. */
  readonly headers?: Readonly<Record<string, readonly string[]>>;
  readonly path?: string;
  readonly method?: string;
}

type Event = ApiGatewayProxyEvent | ApiGatewayProxyEventV2 | AlbEvent;

function lastValues(headers: Readonly<Record<string, readonly string[]>>, lower: boolean): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, values]) => [lower ? name.toLowerCase() : name, values[values.length - 1]!]));
}

function multiValues(headers: Readonly<Record<string, readonly string[]>>, lower: boolean): Record<string, readonly string[]> {
  return Object.fromEntries(Object.entries(headers).map(([name, values]) => [lower ? name.toLowerCase() : name, values]));
}

/** Payload 2.0: names in lower case, a repeated header's values joined with commas. */
function joinedValues(headers: Readonly<Record<string, readonly string[]>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, values]) => [name.toLowerCase(), values.join(',')]));
}

/** An event of `shape` carrying `signed` (its body and headers, with `options` over them). */
export function lambdaEvent(shape: EventShape, signed: SignedDelivery, options: EventOptions = {}): Event {
  const headers =
    options.headers ?? Object.fromEntries(Object.entries({ ...signed.headers, 'User-Agent': 'svc-webhooks-test' }).map(([name, value]) => [name, [value]]));
  const body = options.base64 === true ? Buffer.from(signed.body, 'utf8').toString('base64') : signed.body;
  const isBase64Encoded = options.base64 === true;
  const path = options.path ?? '/webhooks/board';
  const method = options.method ?? 'POST';
  switch (shape) {
    case 'rest': {
      // AWS's example context has more fields than the types name: kept, as an event carries them.
      const requestContext = {
        accountId: '123456789012',
        apiId: '1234567890',
        httpMethod: method,
        path: `/prod${path}`,
        stage: 'prod',
        requestId: 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
        resourcePath: path,
        identity: { sourceIp: '127.0.0.1' },
      };
      return {
        resource: path,
        path,
        httpMethod: method,
        headers: lastValues(headers, false),
        multiValueHeaders: multiValues(headers, false),
        queryStringParameters: null,
        multiValueQueryStringParameters: null,
        pathParameters: null,
        stageVariables: null,
        requestContext,
        body,
        isBase64Encoded,
      };
    }
    case 'http':
    case 'url': {
      const requestContext = {
        accountId: shape === 'http' ? '123456789012' : 'anonymous',
        apiId: shape === 'http' ? 'api-id' : '<urlid>',
        domainName: shape === 'http' ? 'id.execute-api.us-east-1.amazonaws.com' : '<urlid>.lambda-url.us-west-2.on.aws',
        http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'svc-webhooks-test' },
        requestId: 'id',
        routeKey: shape === 'http' ? `${method} ${path}` : '$default',
        stage: '$default',
        time: '12/Mar/2020:19:03:58 +0000',
        timeEpoch: 1583348638390,
      };
      return {
        version: '2.0',
        routeKey: shape === 'http' ? `${method} ${path}` : '$default',
        rawPath: path,
        rawQueryString: '',
        cookies: ['session=abc'],
        headers: joinedValues(headers),
        requestContext,
        body,
        isBase64Encoded,
      };
    }
    case 'alb':
    case 'alb-multi': {
      const common = {
        requestContext: {
          elb: { targetGroupArn: 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/lambda-279XGJDqGZ5rsrHC2Fjr/49e9d65c45c6791a' },
        },
        httpMethod: method,
        path,
        body,
        isBase64Encoded,
      };
      return shape === 'alb'
        ? { ...common, queryStringParameters: {}, headers: lastValues(headers, true) }
        : { ...common, multiValueQueryStringParameters: {}, multiValueHeaders: multiValues(headers, true) };
    }
  }
}
