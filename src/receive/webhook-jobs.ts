import type { IncomingMessage } from 'node:http';
import type { RequestFacts } from '../internal/request-access';
import { pathId, type PathPattern } from '../internal/path-pattern';
import type { BoardDelivery } from './board-protocol';
import type { BotDelivery } from './bot-protocol';
import type { Delivery } from '../internal/delivery';
import type { JobSource } from '../inbox/accepted-delivery';
import type { BoardSignature } from '../verify/verify-signature';
import { keptHeaders, type InboxJob } from '../inbox/inbox-job';
import type { InboxSettings } from '../inbox/inbox-options';

/** What differs between the webhooks in the inbox: what a job keeps, and the signature a worker rebuilds the delivery with. */
export interface WebhookJobs<S, D extends Delivery> extends JobSource<D> {
  /** The verified signature's facts the protocol's `delivery()` reads (never its MAC: the job does not keep it). */
  signatureOf(job: InboxJob): S;
}

const NO_MAC = Buffer.alloc(0);

export function boardJobs(inbox: InboxSettings): WebhookJobs<BoardSignature, BoardDelivery> {
  const isOrdered = (kind: string) => (inbox.ordered === true ? true : inbox.ordered === false ? false : inbox.ordered.has(kind));
  return {
    jobOf({ delivery, body, request, receivedAt }) {
      const job: InboxJob = {
        webhook: 'board',
        deliveryId: delivery.id,
        kind: delivery.kind,
        body: body.toString('utf8'),
        headers: keptHeaders(request),
        receivedAt,
        timestamp: delivery.timestamp,
        ...(delivery.verifiedBoard === undefined ? {} : { verifiedBy: delivery.verifiedBoard }),
      };
      const board = (delivery.event as { board?: { id?: unknown } | null }).board?.id;
      // ping (sequence 0) is outside the sequence; an event without a board id cannot be placed in one.
      if (inbox.ordered === false || delivery.sequence < 1 || typeof board !== 'string' || board === '') return job;
      return { ...job, board, sequence: delivery.sequence, ordered: isOrdered(delivery.kind) };
    },
    signatureOf: (job) => ({ claimed: NO_MAC, timestampText: String(job.timestamp ?? 0), timestamp: job.timestamp ?? 0 }),
  };
}

/** `pattern` and `resolving`: with a secret resolver, the path names the bot whose secret verified the update. */
export function botJobs(pattern: PathPattern, resolving: boolean): WebhookJobs<Buffer, BotDelivery> {
  return {
    jobOf({ delivery, body, request, receivedAt }) {
      const job: InboxJob = { webhook: 'bot', deliveryId: delivery.id, kind: delivery.kind, body: body.toString('utf8'), headers: keptHeaders(request), receivedAt };
      const bot = resolving ? pathId(pattern, request) : undefined;
      return bot === undefined ? job : { ...job, verifiedBy: bot };
    },
    signatureOf: () => NO_MAC,
  };
}

/**
 * The protocols compare the delivery headers with the body through the request; in a worker there
 * is no request, only the headers kept in the job. They read nothing else of it.
 */
export function headersOnly(headers: Readonly<Record<string, string>>): IncomingMessage {
  return { headers, rawHeaders: Object.entries(headers).flat() } as unknown as IncomingMessage;
}
