import type { IncomingMessage } from 'node:http';
import type { RequestAccess } from './request-access';

/**
 * The request as a handler or an error handler sees it: `req` (Node) and `request` (Fetch). Without
 * an access (an inbox worker runs handlers after the request was answered) there is neither.
 */
export class RequestScope {
  readonly #source: unknown;
  readonly #access: RequestAccess<unknown> | undefined;
  #request: Request | undefined;

  constructor(source: unknown, access: RequestAccess<never> | undefined) {
    this.#source = source;
    this.#access = access as RequestAccess<unknown> | undefined;
  }

  get req(): IncomingMessage | undefined {
    return this.#access?.nodeRequest(this.#source);
  }

  get request(): Request | undefined {
    if (this.#access === undefined) return undefined;
    return (this.#request ??= this.#access.fetchRequest(this.#source));
  }
}
