import type { BoardWebhookEvent } from '../../generated/board-types';
import type { BotWebhookUpdate } from '../../generated/bot-types';

/** A delivery after every check: what de-duplication, the inbox and routing need. */
export interface Delivery {
  readonly id: string;
  /** The board event type or the bot event kind. */
  readonly kind: string;
  /** The verified, parsed body. */
  readonly payload: unknown;
}

/** What verifying a delivery established, for the checks after it. */
export interface Verified {
  /**
   * With a secret resolver: the board (bot) whose own secret verified the MAC. Undefined with one
   * secret for the whole webhook.
   */
  readonly by: string | undefined;
  /** Board: the verified X-Svc-Timestamp, in seconds since the epoch. */
  readonly timestamp?: number;
}

export interface BoardDelivery extends Delivery {
  readonly event: BoardWebhookEvent;
  /** The verified X-Svc-Timestamp, in seconds since the epoch. */
  readonly timestamp: number;
  readonly sequence: number;
  /** With a resolver: the board whose secret verified the delivery. */
  readonly verifiedBy: string | undefined;
  /**
   * The board the delivery is for, as verification established it: the resolver's board, or with
   * one secret for the webhook the signed event's `board.id` ('' when a body without one was let
   * through by `schemaPolicy`).
   */
  readonly boardId: string;
}

export interface BotDelivery extends Delivery {
  readonly update: BotWebhookUpdate;
  /** The member of `update.event` named after the kind. */
  readonly data: Record<string, unknown>;
  /** With a resolver: the bot, named by the path, whose secret verified the delivery. */
  readonly verifiedBy: string | undefined;
  /** The bot the update is for: the path's bot with a resolver, else the signed `botUserId`. */
  readonly botId: string;
}

/** A run of missing sequence numbers of a board, both ends included. */
export interface SequenceGap {
  readonly from: number;
  readonly to: number;
}
