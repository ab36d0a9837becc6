import type { IncomingMessage } from 'node:http';
import type { WebhookLogger } from '../internal/logging/logger';
import type { SqlClient } from '../internal/connections/sql-client';
import type { BoardWebhookEvent } from '../generated/board-types';
import type { BotEventData, BotWebhookUpdate, Command, Message, MessageCreateData } from '../generated/bot-types';
import type { SequenceGap } from '../internal/delivery/delivery';
import type { Origin } from './origin';

export type { Awaitable } from '../internal/checks/awaitable';
import type { Awaitable } from '../internal/checks/awaitable';

/** What every handler gets beside the payload. */
export interface DeliveryContext {
  /** The delivery id: `id` of the body, equal to X-Svc-Delivery. */
  readonly deliveryId: string;
  /** A child logger bound to this delivery. */
  readonly log: WebhookLogger;
  /**
   * The Node request (an Express Request when mounted in Express), under the Express and node:http
   * mounts; its body stream is consumed. Absent under `createWebHandler` (use `request`) and when the
   * handler runs in an inbox worker, after the request was answered.
   */
  readonly req?: IncomingMessage;
  /**
   * The request as a Fetch `Request`: the one `createWebHandler` was given, or under the Node mounts
   * one made on first use from the Node request's method, URL and headers. Its body is consumed.
   * Absent in an inbox worker.
   */
  readonly request?: Request;
  /**
   * Aborted when the handler deadline (`timeout`) passes; in an inbox worker when the worker is
   * closed or the run outlives `abandonAfter`: stop work that is no longer awaited.
   */
  readonly signal: AbortSignal;
  /** When the request arrived, in ms since the epoch (from the `now` option). */
  readonly receivedAt: number;
  /**
   * Runs `work` in a transaction of the de-dup store's database (`postgresStore`) and records this
   * delivery as handled in that same transaction, before COMMIT: its database writes through `tx`
   * happen exactly once, even if the process dies at any point. If `work` or the COMMIT fails,
   * nothing of it persists and the retry runs the handler again. One transaction per delivery, and
   * only for a delivery with one handler; rejects (a TypeError) with a store without transactions.
   * Annotate `tx` to use your client's full type: `ctx.transaction(async (tx: PoolClient) => ...)`.
   */
  transaction<T, Tx extends SqlClient = SqlClient>(work: (tx: Tx) => Awaitable<T>): Promise<T>;
  /** Which run of the handlers this is for the delivery: 1, then 2, 3 … for the inbox's retries (always 1 in direct mode). */
  readonly attempt: number;
}

/** What a board handler gets beside the event. */
export interface BoardContext<E = BoardWebhookEvent> extends DeliveryContext {
  readonly webhook: 'board';
  /** The event type, `event.type`. */
  readonly type: string;
  /** The whole event (the same object as the handler's first argument). */
  readonly event: E;
  /** The verified X-Svc-Timestamp, in seconds since the epoch. */
  readonly timestamp: number;
  /** The board's sequence number of this event, for ordering (0 for ping). */
  readonly sequence: number;
  /**
   * The board this delivery is for, as its verification established it: with a secret resolver the
   * board whose secret verified it, with one secret the signed event's `board.id`. Key tenant data
   * by this, not by fields of the event a board's admin could choose: `board.key` and
   * `workspace_id` are not checked against svc (docs/security.md, "What a handler may trust").
   */
  readonly boardId: string;
  /**
   * Who made the change, from the event's `actor` and `rule`: `'person'`, `'bot'` (`actor.is_bot`
   * true), `'rule'` (an automation rule: `rule` set, `actor` null) or `'server'` (`actor` and `rule`
   * null: auto-archive, Git events, `ping`). Board webhook only; the bot webhook's context has none.
   * The `ignore` option answers some of these without running handlers at all.
   */
  readonly origin: Origin;
  /**
   * Inbox with board order only: the sequence numbers before this event that never arrived within
   * `gapWaitMs` (both ends included). Reconcile, for example by re-reading the board.
   */
  readonly gap?: SequenceGap;
}

/** What a bot handler gets beside the event data. */
export interface BotContext extends DeliveryContext {
  readonly webhook: 'bot';
  /** The event kind: the name of the one member of `update.event`. */
  readonly kind: string;
  /** The whole BotWebhookUpdate. */
  readonly update: BotWebhookUpdate;
  /**
   * The bot this update is for, as its verification established it: with a secret resolver the bot
   * its path names (whose secret verified it, and which `botUserId` must equal), with one secret the
   * signed `botUserId`.
   */
  readonly botId: string;
}

/** The `messageCreate` data a `.command()` handler gets: its message always carries the command. */
export type CommandData = MessageCreateData & { message: Message & { command: Command } };

/** A board handler: `(event, ctx) => void | Promise<void>`; a throw or rejection fails the delivery (retried). */
export type BoardHandler<E = BoardWebhookEvent> = (event: E, ctx: BoardContext<E>) => Awaitable<unknown>;
/** A bot handler: `(data, ctx) => void | Promise<void>`; a throw or rejection fails the delivery (retried). */
export type BotHandler<D = BotEventData> = (data: D, ctx: BotContext) => Awaitable<unknown>;

export type { ErrorContext, ErrorHandler, DeliveryRecord, QueueOutcome, DeliveryListener, IgnoreReason } from '../internal/delivery/delivery-record';
export type { Origin, IgnoreOptions } from './origin';
