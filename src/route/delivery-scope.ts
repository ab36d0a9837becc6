import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { SequenceGap } from '../ordering/board-sequence-tracker';
import type { DeliveryContext } from './handler-types';

/**
 * The part of a handler's context that every delivery has. The child logger and the AbortSignal
 * are made on first use: most handlers touch neither, and each costs more than the rest of routing.
 */
export class DeliveryScope implements DeliveryContext {
  readonly #logger: Logger;
  readonly #kind: string;
  #log: Logger | undefined;
  #controller: AbortController | undefined;
  #aborted = false;

  constructor(
    readonly deliveryId: string,
    kind: string,
    readonly req: IncomingMessage | undefined,
    readonly receivedAt: number,
    logger: Logger,
    readonly attempt = 1,
    /** Board order in an inbox worker: the sequence numbers given up on before this event. */
    readonly gap?: SequenceGap,
  ) {
    this.#kind = kind;
    this.#logger = logger;
  }

  get log(): Logger {
    return (this.#log ??= this.#logger.child({ deliveryId: this.deliveryId, kind: this.#kind }));
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined && this.#aborted) return AbortSignal.abort(deadlineReason());
    return (this.#controller ??= new AbortController()).signal;
  }

  /** Tells the handlers (through `signal`) that their deadline passed. */
  static abort(scope: DeliveryScope): void {
    scope.#aborted = true;
    scope.#controller?.abort(deadlineReason());
  }
}

function deadlineReason(): Error {
  return new Error('handler deadline passed');
}
