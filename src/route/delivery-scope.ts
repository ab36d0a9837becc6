import type { IncomingMessage } from 'node:http';
import type { ChildLoggerOptions, Logger } from 'pino';
import { redactingLogOptions } from '../internal/log-redaction';
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
  #secrets: (() => readonly string[]) | undefined;

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
    if (this.#log !== undefined) return this.#log;
    const bindings = { deliveryId: this.deliveryId, kind: this.#kind };
    const secrets = this.#secrets?.();
    this.#log = secrets === undefined || secrets.length === 0 ? this.#logger.child(bindings) : this.#logger.child(bindings, redactingLogOptions(secrets) as ChildLoggerOptions);
    return this.#log;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined && this.#aborted) return AbortSignal.abort(deadlineReason());
    return (this.#controller ??= new AbortController()).signal;
  }

  /**
   * With a secret resolver the parent logger cannot know every board's secret: the handlers' logger
   * drops the secrets of the board (or bot) this delivery was verified with.
   */
  static dropFromLog(scope: DeliveryScope, secrets: () => readonly string[]): void {
    scope.#secrets = secrets;
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
