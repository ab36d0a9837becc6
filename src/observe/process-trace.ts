import type * as OtelApi from '@opentelemetry/api';
import { handlerSpans, type HandlerCall } from './handler-spans';
import { messagingAttributes, spanContextOf, SPAN_PROCESS, type Api, type Webhook } from './otel-api';
import type { TraceCarrier } from '../internal/delivery/trace-carrier';

/** What a processing span says of its attempt. */
export interface ProcessAttempt {
  readonly deliveryId: string;
  readonly kind: string;
  /** 1 for the first run, then 2, 3 … on retries. */
  readonly attempt: number;
  /** The receive span's context, kept in the job. */
  readonly receivedIn: TraceCarrier | undefined;
}

/**
 * One processing attempt of an enqueued delivery: a span of its own trace, started when the
 * worker runs the handlers, with a link to the receive span (hours may lie between them, and every
 * retry is another attempt, so the receive span is not made its parent). Handlers run in child spans.
 */
export class ProcessTrace {
  private readonly span: OtelApi.Span;
  private readonly context: OtelApi.Context;

  private readonly otel: Api;
  private readonly webhook: Webhook;
  private readonly tracer: OtelApi.Tracer;
  private readonly attempt: ProcessAttempt;
  private readonly secrets: readonly string[];

  constructor(parts: { otel: Api; webhook: Webhook; tracer: OtelApi.Tracer; attempt: ProcessAttempt; secrets: readonly string[] }) {
    const { otel, webhook, tracer, attempt } = parts;
    this.otel = otel;
    this.webhook = webhook;
    this.tracer = tracer;
    this.attempt = attempt;
    this.secrets = parts.secrets;
    const received = spanContextOf(otel, attempt.receivedIn);
    const parent = otel.context.active();
    this.span = tracer.startSpan(
      SPAN_PROCESS,
      {
        kind: otel.SpanKind.CONSUMER,
        attributes: {
          ...messagingAttributes(webhook, 'process'),
          'messaging.message.id': attempt.deliveryId,
          'svc.webhook.kind': attempt.kind,
          'svc.webhook.attempt': attempt.attempt,
        },
        ...(received === undefined ? {} : { links: [{ context: received }] }),
      },
      parent,
    );
    this.context = otel.trace.setSpan(parent, this.span);
  }

  /** `verifierSecrets`: the secrets of the board (bot) that verified the delivery, with a secret resolver. */
  handlers(calls: HandlerCall[], verifierSecrets: readonly string[]): HandlerCall[] {
    return handlerSpans({ otel: this.otel, tracer: this.tracer, context: this.context, webhook: this.webhook }, calls, {
      deliveryId: this.attempt.deliveryId,
      kind: this.attempt.kind,
      secrets: [...this.secrets, ...verifierSecrets],
    });
  }

  /** Ends the span with the attempt's outcome (`processed`, `retried`, `dead`) and, when it failed, the error code. */
  end(outcome: string, code?: string): void {
    try {
      this.span.setAttribute('svc.webhook.outcome', outcome);
      if (code !== undefined) {
        this.span.setAttribute('svc.webhook.code', code);
        this.span.setAttribute('error.type', code);
        this.span.setStatus({ code: this.otel.SpanStatusCode.ERROR, message: code });
      }
      this.span.end();
    } catch {
      // An SDK that throws has nowhere to report to; the attempt's outcome stands.
    }
  }
}
