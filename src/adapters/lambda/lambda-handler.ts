import type { Middleware } from '../node/express-middleware';
import { receiveRequest, type WebhookResponse } from '../plain/plain-request';
import { receiverOf } from '../webhook-receiver';
import type { AlbResult, LambdaHandler, LambdaHttpResult } from './lambda-events';
import { readLambdaEvent, type LambdaEventKind } from './lambda-request';

const UNSUPPORTED: WebhookResponse = {
  status: 500,
  headers: { 'Content-Type': 'application/json; charset=utf-8' },
  body: '{"ok":false,"code":"unsupported_event","message":"this function takes HTTP events of API Gateway, a Function URL or an ALB"}',
};

/**
 * A webhook as an AWS Lambda handler for HTTP events: API Gateway REST APIs (payload 1.0), HTTP APIs
 * (payload 2.0), Function URLs and Application Load Balancers. It verifies the exact bytes of the
 * body (decoded from base64 when the event says so), keeps a repeated header as sent, and answers
 * each event in the shape its caller expects. `export const handler = createLambdaHandler(board)`.
 */
export function createLambdaHandler(webhook: Middleware): LambdaHandler {
  const receiver = receiverOf(webhook, 'createLambdaHandler');
  async function svcLambdaHandler(event: unknown): Promise<LambdaHttpResult> {
    const read = readLambdaEvent(event);
    if (!read.ok) {
      try {
        receiver.logger.error(
          { code: 'unsupported_event', shape: read.shape },
          `a Lambda event that is no HTTP request of API Gateway, a Function URL or an ALB was answered 500: it was ${read.shape}; invoke this function only from those`,
        );
      } catch {
        // A logger that throws must not turn the answer into a failed invocation.
      }
      return resultOf(UNSUPPORTED, 'rest', false);
    }
    return resultOf(await receiveRequest(receiver, read.request), read.kind, read.multiValueHeaders);
  }
  return svcLambdaHandler as LambdaHandler;
}

/** The answer in the shape the event's caller reads; no body is binary. */
function resultOf(answer: WebhookResponse, kind: LambdaEventKind, multiValueHeaders: boolean): LambdaHttpResult {
  if (kind !== 'alb') return { statusCode: answer.status, headers: answer.headers, body: answer.body, isBase64Encoded: false };
  const result: { -readonly [K in keyof AlbResult]: AlbResult[K] } = {
    statusCode: answer.status,
    statusDescription: statusLine(answer.status),
    body: answer.body,
    isBase64Encoded: false,
  };
  // A target group with multi-value headers reads only `multiValueHeaders` from the result.
  if (multiValueHeaders) result.multiValueHeaders = Object.fromEntries(Object.entries(answer.headers).map(([name, value]) => [name, [value]]));
  else result.headers = answer.headers;
  return result;
}

/** The reason phrases of the statuses a webhook answers with (RFC 9110). */
const REASONS: Readonly<Record<number, string>> = {
  200: 'OK',
  400: 'Bad Request',
  401: 'Unauthorized',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** An ALB's `statusDescription`: the status and its reason phrase, such as `200 OK`. */
export function statusLine(status: number): string {
  const reason = REASONS[status];
  return reason === undefined ? String(status) : `${status} ${reason}`;
}
