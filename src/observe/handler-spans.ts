import type * as OtelApi from '@opentelemetry/api';
import { textScrubber } from '../internal/logging/log-redaction';
import { safeError } from '../internal/logging/safe-error';
import { isThenable } from '../internal/checks/value-checks';
import { messagingAttributes, type Api, type Webhook } from './otel-api';
import { SPAN_HANDLER } from './otel-api';

/** The delivery a handler span belongs to, and the secrets its recorded errors must not show. */
export interface HandlerSpanOf {
  readonly deliveryId: string;
  readonly kind: string;
  readonly secrets: readonly string[];
}

/** Where handler spans are made: the api, the tracer, the span they are children of, the webhook. */
export interface SpanParent {
  readonly otel: Api;
  readonly tracer: OtelApi.Tracer;
  readonly context: OtelApi.Context;
  readonly webhook: Webhook;
}

/** One handler's call, as the router makes it. */
export type HandlerCall = () => unknown;

/** Wraps each handler call in a child span of the parent's, ended when the handler settles. */
export function handlerSpans(
  { otel, tracer, context: parent, webhook }: SpanParent,
  calls: HandlerCall[],
  { deliveryId, kind, secrets }: HandlerSpanOf,
): HandlerCall[] {
  return calls.map((call, index) => () => {
    const span = tracer.startSpan(
      SPAN_HANDLER,
      {
        attributes: {
          ...messagingAttributes(webhook, 'process'),
          'messaging.message.id': deliveryId,
          'svc.webhook.kind': kind,
          'svc.webhook.handler.index': index,
        },
      },
      parent,
    );
    let result: unknown;
    try {
      result = otel.context.with(otel.trace.setSpan(parent, span), call);
    } catch (err) {
      failed(otel, span, err, secrets);
      throw err;
    }
    if (!isThenable(result)) {
      span.end();
      return result;
    }
    return Promise.resolve(result).then(
      (value) => {
        span.end();
        return value;
      },
      (err: unknown) => {
        failed(otel, span, err, secrets);
        throw err;
      },
    );
  });
}

/**
 * Records what a handler threw on its span, read through a safe copy (the value may be hostile),
 * its texts scrubbed as a log line's are: a span leaves the process as a log line does.
 */
function failed(otel: Api, span: OtelApi.Span, err: unknown, secrets: readonly string[]): void {
  const safe = safeError(err);
  const scrub = textScrubber(secrets);
  const message = scrub(safe.message);
  // The name is the thrower's text as much as the message is.
  const name = scrub(safe.name);
  const code = (safe as { code?: unknown }).code;
  span.recordException({
    name,
    message,
    ...(safe.stack === undefined ? {} : { stack: scrub(safe.stack) }),
    ...(typeof code === 'string' ? { code: scrub(code) } : {}),
  });
  span.setAttribute('error.type', name);
  span.setStatus({ code: otel.SpanStatusCode.ERROR, message });
  span.end();
}
