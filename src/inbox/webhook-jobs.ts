import type { BoardDelivery, BotDelivery, Delivery } from '../internal/delivery/delivery';
import type { AcceptedDelivery, JobSource } from './accepted-delivery';
import { keptHeaders, type InboxJob } from './inbox-job';
import type { InboxSettings } from './inbox-options';

const utf8 = new TextDecoder();

/** What every job keeps of its delivery. */
function jobOf(
  webhook: 'board' | 'bot',
  { delivery, body, request, receivedAt }: AcceptedDelivery<Delivery & { readonly verifiedBy: string | undefined }>,
): InboxJob {
  return {
    webhook,
    deliveryId: delivery.id,
    kind: delivery.kind,
    body: utf8.decode(body),
    headers: keptHeaders(request),
    receivedAt,
    ...(delivery.verifiedBy === undefined ? {} : { verifiedBy: delivery.verifiedBy }),
  };
}

/** A board event's job: with its verified timestamp and, under board order, its board and sequence. */
export function boardJobs(inbox: InboxSettings): JobSource<BoardDelivery> {
  const isOrdered = (kind: string) => (inbox.ordered === true ? true : inbox.ordered === false ? false : inbox.ordered.has(kind));
  return {
    jobOf(accepted) {
      const { delivery } = accepted;
      const job: InboxJob = { ...jobOf('board', accepted), timestamp: delivery.timestamp };
      // ping (sequence 0) is outside the sequence; an event without a board id cannot be placed in one.
      if (inbox.ordered === false || delivery.sequence < 1 || delivery.boardId === '') return job;
      return { ...job, board: delivery.boardId, sequence: delivery.sequence, ordered: isOrdered(delivery.kind) };
    },
  };
}

/** A bot update's job. */
export function botJobs(): JobSource<BotDelivery> {
  return { jobOf: (accepted) => jobOf('bot', accepted) };
}
