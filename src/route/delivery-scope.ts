import type { WebhookLogger } from '../internal/logger';
import type { SqlClient } from '../internal/sql-client';
import { childDropping, NO_SECRETS } from '../internal/log-redaction';
import type { RequestAccess } from '../internal/request-access';
import type { SequenceGap } from '../internal/delivery';
import type { Awaitable, DeliveryContext } from './handler-types';
import { RequestScope } from '../internal/request-scope';

/** The claim a delivery's handlers run under: what a transaction needs to record the delivery as done. */
export interface DeliveryClaim {
  /** The de-dup store, as far as a transaction needs it. */
  readonly store: { transaction?<T>(id: string, token: string, work: (client: SqlClient) => T | PromiseLike<T>): Promise<T> };
  readonly token: string;
  /** How many handlers this delivery runs. */
  readonly handlers: number;
}

/** What a delivery's context is made of. */
export interface ScopeInit {
  readonly deliveryId: string;
  readonly kind: string;
  /** The request and how to read it; both absent in an inbox worker, after the request was answered. */
  readonly source?: unknown;
  readonly access?: RequestAccess<never> | undefined;
  /** When the request arrived, in ms since the epoch. */
  readonly receivedAt: number;
  /** The webhook's logger; `ctx.log` is its child. */
  readonly logger: WebhookLogger;
  /** Which run of the handlers this is (inbox retries); default 1. */
  readonly attempt?: number;
  /** Board order in an inbox worker: the sequence numbers given up on before this event. */
  readonly gap?: SequenceGap | undefined;
}

/**
 * The part of a handler's context that every delivery has. The child logger and the AbortSignal
 * are made on first use: most handlers touch neither, and each costs more than the rest of routing.
 */
export class DeliveryScope extends RequestScope implements DeliveryContext {
  readonly #logger: WebhookLogger;
  readonly #kind: string;
  #log: WebhookLogger | undefined;
  #controller: AbortController | undefined;
  #aborted = false;
  #claim: DeliveryClaim | undefined;
  #transacted = false;
  #secrets: readonly string[] = NO_SECRETS;

  readonly deliveryId: string;
  readonly receivedAt: number;
  readonly attempt: number;
  readonly gap: SequenceGap | undefined;

  constructor(init: ScopeInit) {
    super(init.source, init.access);
    this.deliveryId = init.deliveryId;
    this.receivedAt = init.receivedAt;
    this.attempt = init.attempt ?? 1;
    this.gap = init.gap;
    this.#kind = init.kind;
    this.#logger = init.logger;
  }

  get log(): WebhookLogger {
    if (this.#log !== undefined) return this.#log;
    this.#log = childDropping(this.#logger, { deliveryId: this.deliveryId, kind: this.#kind }, this.#secrets);
    return this.#log;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined && this.#aborted) return AbortSignal.abort(deadlineReason());
    return (this.#controller ??= new AbortController()).signal;
  }

  transaction<T, Tx extends SqlClient = SqlClient>(work: (tx: Tx) => Awaitable<T>): Promise<T> {
    try {
      const { store, token } = DeliveryScope.takeTransaction(this);
      if (store.transaction === undefined)
        throw new TypeError("svc-webhooks: ctx.transaction needs a store with transactions (postgresStore); this webhook's store has none");
      return store.transaction<T>(this.deliveryId, token, work as (tx: SqlClient) => Awaitable<T>);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * With a secret resolver the parent logger cannot know every board's secret: the handlers' logger
   * drops the secrets of the board (or bot) this delivery was verified with. They are taken when the
   * delivery is, not when a handler first logs: by then they may have left the resolver's cache.
   */
  static dropFromLog(scope: DeliveryScope, secrets: readonly string[]): void {
    scope.#secrets = secrets;
  }

  /** Tells the handlers (through `signal`) that their deadline passed. */
  static abort(scope: DeliveryScope): void {
    scope.#aborted = true;
    scope.#controller?.abort(deadlineReason());
  }

  /** The one seam between the receiver and a handler's transaction: the claim the handlers run under. */
  static bindClaim(scope: DeliveryScope, claim: DeliveryClaim): void {
    scope.#claim = claim;
  }

  /**
   * The claim, for the one transaction that records this delivery as done. A second transaction,
   * or one beside other handlers, could record the delivery as done while other work of it still
   * fails, and that work would never be retried: both are refused.
   */
  static takeTransaction(scope: DeliveryContext): DeliveryClaim {
    const claim = scope instanceof DeliveryScope ? scope.#claim : undefined;
    if (!(scope instanceof DeliveryScope) || claim === undefined) throw new TypeError('svc-webhooks: this context belongs to no delivery being handled');
    if (claim.handlers !== 1) {
      throw new TypeError(
        `svc-webhooks: a transaction records the whole delivery as done, so it needs the delivery to have one handler; this one has ${claim.handlers}`,
      );
    }
    if (scope.#transacted) throw new TypeError('svc-webhooks: a delivery has one transaction; this handler already opened it');
    scope.#transacted = true;
    return claim;
  }
}

function deadlineReason(): Error {
  return new Error('handler deadline passed');
}
